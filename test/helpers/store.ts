import { join } from 'node:path';
import { type Db, openDb } from '../../src/store/db.js';
import { tempDir } from './cli.js';

/** A real SQLite store in a temporary directory. */
export function tempStore(): { db: Db; path: string; dir: string; close: () => void } {
  const dir = tempDir('replay-store-');
  const path = join(dir.path, 'replay.db');
  const db = openDb(path);
  return {
    db,
    path,
    dir: dir.path,
    close: () => {
      if (db.open) db.close();
      dir.remove();
    },
  };
}
