import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readShape } from '../../../src/sources/docker-agent/schema.js';
import { tempDir } from '../../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('docker-agent-schema-');
});
afterEach(() => dir.remove());

function bySqlite(file: string): Map<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
      sql: string;
    }[];
    return new Map(rows.map((row) => [row.name, row.sql]));
  } finally {
    db.close();
  }
}

describe('reading a SQLite schema from the file pages (detect opens nothing through SQLite)', () => {
  it('lists the tables SQLite lists, across schema pages, overflow pages and UTF-16 text', () => {
    for (const [name, encoding, pageSize] of [
      ['utf8.db', 'UTF-8', 1024],
      ['utf16.db', 'UTF-16be', 512],
    ] as const) {
      const file = join(dir.path, name);
      const db = new Database(file);
      db.pragma(`page_size = ${pageSize}`);
      db.pragma(`encoding = '${encoding}'`);
      for (let n = 0; n < 60; n++) {
        // Long statements spill onto overflow pages; many of them split the schema over several pages.
        const columns = Array.from({ length: 40 }, (_, c) => `column_${c}_ünïcode TEXT`).join(', ');
        db.exec(
          `CREATE TABLE table_${n} (${columns}); CREATE INDEX index_${n} ON table_${n} (column_0_ünïcode)`,
        );
      }
      db.close();
      const shape = readShape(file);
      expect(shape?.wal).toBe(false);
      expect(shape?.tables).toEqual(bySqlite(file));
    }
  });
});
