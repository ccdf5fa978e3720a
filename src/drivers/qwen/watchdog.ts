// The watchdog a replayed Qwen runs under, in Node rather than the shared /bin/sh one (common/watchdog.ts): the
// `qwen` entry script (cli-entry.js) does not run the CLI itself but starts `node --expose-gc cli.js` with
// spawnSync and waits, so a signal to the process we started stops the entry and leaves the CLI running. Qwen is
// therefore started in a process group of its own (`detached`), and every stop goes to the whole group: when the
// replay process is gone (TERM, then KILL 2 s later), when the watchdog is told to stop (a timeout), and, for
// anything left behind, when Qwen exits. Its exit status is Qwen's, or `orphanExitCode` when the replay was gone.
import { orphanExitCode } from '../common/watchdog.js';

/** `node watch.mjs REPLAY_PID QWEN ARGS…`: the script. */
export function watchdogScript(): string {
  return `// replay-history: run qwen in a process group of its own, stopped whole when the replay process is gone.
import { spawn } from 'node:child_process';
const [replay, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: 'inherit', detached: true });
const group = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone.
  }
};
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
let orphaned = false;
const watcher = setInterval(() => {
  if (alive(Number(replay))) return;
  orphaned = true;
  group('SIGTERM');
  setTimeout(() => group('SIGKILL'), 2000).unref();
}, 1000);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => group('SIGTERM'));
child.on('error', (error) => {
  process.stderr.write(\`replay-history: cannot start \${command}: \${error.message}\\n\`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  clearInterval(watcher);
  group('SIGKILL');
  process.exit(orphaned || !alive(Number(replay)) ? ${orphanExitCode} : (code ?? (signal ? 128 : 1)));
});
`;
}
