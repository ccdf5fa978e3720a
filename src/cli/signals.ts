// The signals that stop a command (Ctrl-C, `kill`, a closed terminal), and how a command that cleans up after one
// exits: 128 + the signal's number, as a shell reports a process killed by it.
import { constants } from 'node:os';

export const stopSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Calls `stop` on the first stop signal, then exits as the shell would report the signal. Returns what takes the
 * handler off again (the work it guards is over).
 */
export function onStop(stop: (signal: NodeJS.Signals) => void): () => void {
  const handler = (signal: NodeJS.Signals) => {
    stop(signal);
    process.exit(128 + (constants.signals[signal] ?? 2));
  };
  for (const signal of stopSignals) process.once(signal, handler);
  return () => {
    for (const signal of stopSignals) process.off(signal, handler);
  };
}
