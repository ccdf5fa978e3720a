import { Option } from 'commander';
import { defaultDbPath } from '../../store/db.js';
import { UserError } from '../errors.js';

export function dbOption(): Option {
  return new Option('--db <file>', 'the SQLite store, e.g. --db /tmp/replay.db').default(
    defaultDbPath(),
    '$REPLAY_HISTORY_DB, else $XDG_DATA_HOME (or ~/.local/share)/replay-history/replay.db',
  );
}

export function jsonOption(): Option {
  return new Option('--json', 'machine-readable output on stdout');
}

/** Room for the note a cut result ends with, and a little of the result itself. */
export const minResultBytes = 256;

export const atLeast = (name: string, min: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new UserError(`${name} takes a whole number from ${min}, not '${value}'`);
  return n;
};
