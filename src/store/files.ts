import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

/** What the store remembers of a log file it has read. */
export interface SourceFileRow {
  path: string;
  agent: string;
  size: number;
  mtime_ms: number;
  inode: number;
  parsed_bytes: number;
}

export class SourceFiles {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Db) {}

  /** Statements are prepared once per store and reused: ingest runs the same few for every file. */
  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  get(path: string): SourceFileRow | undefined {
    return this.sql('SELECT * FROM source_files WHERE path = ?').get(path) as SourceFileRow | undefined;
  }

  put(row: SourceFileRow): void {
    this.sql(
      `INSERT INTO source_files (path, agent, size, mtime_ms, inode, parsed_bytes, ingested_at)
         VALUES (@path, @agent, @size, @mtime_ms, @inode, @parsed_bytes, @ingested_at)
         ON CONFLICT (path) DO UPDATE SET agent=excluded.agent, size=excluded.size, mtime_ms=excluded.mtime_ms,
           inode=excluded.inode, parsed_bytes=excluded.parsed_bytes,
           ingested_at=excluded.ingested_at`,
    ).run({ ...row, ingested_at: new Date().toISOString() });
  }
}
