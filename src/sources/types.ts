import type { Stats } from 'node:fs';
import type { AgentId, Session } from '../model/session.js';

/** A session as an adapter read it, with whether it came from its own file or from an inline mirror. */
export interface ParsedSession extends Session {
  /** 'mirror': rebuilt from copies inside another session's log; a session read from its own file wins. */
  origin: 'file' | 'mirror';
}

/** Which tool call of a parent session started a sub-agent. */
export interface Spawn {
  parentSourceId: string;
  childSourceId: string;
  toolCallId: string;
}

/** A problem with one line (or one file when line is absent), reported and skipped. */
export interface Warning {
  file: string;
  line?: number;
  message: string;
  /** The file or directory could not be read at all (as opposed to a bad line inside it). */
  unreadable?: boolean;
}

export interface FileResult {
  /**
   * The sessions of the file (or database, or storage tree) the adapter was given. May be lazy — a database
   * yields one session at a time — so `spawns`, `warnings`, `notes` and the counts are complete only once
   * `sessions` has been iterated to the end. An error thrown while iterating is a problem with the input.
   */
  sessions: Iterable<ParsedSession>;
  spawns: Spawn[];
  warnings: Warning[];
  notes: string[];
  /** Records read (lines, or rows), records skipped. */
  lines: number;
  skipped: number;
  /** Byte offset after the last complete line: what the next incremental read starts from. */
  parsedBytes: number;
}

/** What says a log is unchanged since the last ingest. */
export interface Fingerprint {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** One log format. All adapters have this shape. */
export interface SourceAdapter {
  agent: AgentId;
  /**
   * Bumped whenever what the reader makes of the same bytes changes (a flag, a field, a fix): files read by
   * another version are read again on the next ingest, so a store follows its reader without being rebuilt.
   */
  version: string;
  /**
   * Is this file one unit of this format (a transcript, a database, a session's entry file in a storage
   * tree)? Cheap: looks at the path first and at most the first bytes.
   */
  detect(file: string): boolean;
  /** Default places this agent keeps its logs on this machine. */
  defaultRoots(): string[];
  parseFile(file: string): FileResult;
  /**
   * What must be unchanged for the unit to be skipped on the next ingest; default: the file's size, mtime and
   * inode. A database adds its -wal file; a storage-tree session adds its message and part files.
   */
  fingerprint?(file: string, stat: Stats): Fingerprint;
  /** Directories this format reads through another file (never walked on their own). */
  prune?(dir: string): boolean;
}
