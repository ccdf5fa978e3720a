import { Option } from 'commander';
import { defaultDbPath } from '../../store/db.js';

export function dbOption(): Option {
  return new Option('--db <file>', 'the SQLite store (env REPLAY_HISTORY_DB)').default(
    defaultDbPath(),
    '$REPLAY_HISTORY_DB, else $XDG_DATA_HOME (or ~/.local/share)/replay-history/replay.db',
  );
}

export function jsonOption(): Option {
  return new Option('--json', 'machine-readable output on stdout');
}
