// The watchdog every real agent of a replay runs under (Claude Code, Codex): the agent is stopped as soon as
// the replay process is gone, whatever killed it.

/** What the watchdog exits with when it stopped the agent because replay-history was gone. */
export const orphanExitCode = 70;

/**
 * The watchdog an agent runs under: `watch.sh REPLAY_PID AGENT ARGS…` starts it, and stops it (TERM, then
 * KILL) as soon as the replay process is gone — a replay-history killed by SIGKILL runs no cleanup, and
 * an agent left alone would go on retrying its dead model endpoint. Its tools stay denied either way (the
 * hook needs nothing of ours); this only ends the process. A TERM or INT sent to the watchdog (a timeout) is
 * passed on. The agent reads the watchdog's stdin.
 */
export function watchdogScript(): string {
  return `#!/bin/sh
# replay-history: run the agent, and stop it when the replay process (pid $1) is gone.
replay="$1"; shift
# A job started with & reads /dev/null unless told otherwise: the agent gets this script's stdin (a prompt).
exec 3<&0
"$@" <&3 3<&- &
child=$!
exec 3<&-
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
(
  while kill -0 "$replay" 2>/dev/null; do sleep 1; done
  kill -TERM "$child" 2>/dev/null; sleep 2; kill -KILL "$child" 2>/dev/null
) &
watcher=$!
wait "$child"
status=$?
if ! kill -0 "$replay" 2>/dev/null; then status=${orphanExitCode}; fi
kill "$watcher" 2>/dev/null
exit $status
`;
}
