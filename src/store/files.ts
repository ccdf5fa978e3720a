import type { Statement } from 'better-sqlite3';
import { type Db, statementCache } from './db.js';

/** What the store remembers of a log file it has read. */
export interface SourceFileRow {
  path: string;
  agent: string;
  size: number;
  mtime_ms: number;
  inode: number;
  parsed_bytes: number;
  /** The reader's version (SourceAdapter.version) that read it; '' before versions were kept. */
  parser: string;
  /** JSON of what the reader keeps to continue the file from parsed_bytes (null: read it again whole). */
  resume: string | null;
}

export class SourceFiles {
  /** Each statement is prepared once per store and reused. */
  private readonly sql: (text: string) => Statement;

  constructor(db: Db) {
    this.sql = statementCache(db);
  }

  get(path: string): SourceFileRow | undefined {
    return this.sql('SELECT * FROM source_files WHERE path = ?').get(path) as SourceFileRow | undefined;
  }

  put(row: SourceFileRow): void {
    this.sql(
      `INSERT INTO source_files (path, agent, size, mtime_ms, inode, parsed_bytes, parser, resume, ingested_at)
         VALUES (@path, @agent, @size, @mtime_ms, @inode, @parsed_bytes, @parser, @resume, @ingested_at)
         ON CONFLICT (path) DO UPDATE SET agent=excluded.agent, size=excluded.size, mtime_ms=excluded.mtime_ms,
           inode=excluded.inode, parsed_bytes=excluded.parsed_bytes, parser=excluded.parser,
           resume=excluded.resume, ingested_at=excluded.ingested_at`,
    ).run({ ...row, ingested_at: new Date().toISOString() });
  }
}
