import type { Stats } from 'node:fs';
import type { MessageOrigin, RequestLog, RequestRecord } from '../model/request.js';
import type { AgentId, Message, Session } from '../model/session.js';

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

/** What any read of a file reports beside its sessions: whole (parseFile) or continued (continueFile). */
export interface ReadReport {
  spawns: Spawn[];
  warnings: Warning[];
  notes: string[];
  /** Records read (lines, or rows), records skipped. */
  lines: number;
  skipped: number;
  /** Byte offset after the last complete line: what the next incremental read starts from. */
  parsedBytes: number;
  /** What the reader needs to continue this file from parsedBytes next time; absent: it can only be read whole. */
  resume?: Resume;
}

export interface FileResult extends ReadReport {
  /**
   * The sessions of the file (or database, or storage tree) the adapter was given. May be lazy — a database
   * yields one session at a time — so `spawns`, `warnings`, `notes` and the counts are complete only once
   * `sessions` has been iterated to the end. An error thrown while iterating is a problem with the input.
   */
  sessions: Iterable<ParsedSession>;
}

/** A reader's state at the end of what it read of a file, kept by the store for the next read. */
export interface Resume {
  /** The session new lines would continue, and how many messages the reader had made of it. */
  sessionId: string;
  messages: number;
  /** The reader's own state (JSON-safe). */
  state: unknown;
}

/** A file read on from where the last read stopped: what changed in the one session it continues. */
export interface Continued extends ReadReport {
  sessionId: string;
  /** Index (in the reader's messages of the session) of the first message that changed or is new. */
  from: number;
  /** The messages from `from` on: those the new lines changed, then the new ones. */
  messages: Message[];
  /**
   * The session's metadata after the new lines; `continues` only when the reader names the history it continues
   * by line (else the store keeps the one it found).
   */
  meta: Omit<Session, 'messages' | 'requests'>;
  /** What the new lines add to the session's recorded request log; absent when they add nothing to it. */
  requests?: GrownRequests;
}

/** Request records a continued read found: appended to those stored, with what they name that is new. */
export interface GrownRequests {
  /** Index of the first new record: how many the session held before. */
  from: number;
  records: RequestRecord[];
  /** A record stored before that the new lines answered: its index and the response it produced. */
  bound?: { seq: number; responseId: string };
  /** Shapes and messages the new records name that the session's log did not hold yet. */
  shapes: RequestLog['shapes'];
  messages: RequestLog['messages'];
}

/** What a continued read may look up in the store about the session it continues. */
export interface StoredSession {
  /** The session's messages from an index on (the reader's index), as stored; undefined when it cannot say. */
  messages(index: number): Message[] | undefined;
  /** Where the message of this hash in the session's request log came from; undefined when it holds none. */
  requestMessage(hash: string): MessageOrigin | undefined;
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
   * Reads only the bytes after `from.offset` of a file that grew, given the state the last read kept, when they
   * merely continue the session it read; `stored` is what the store holds of that session. Returns why not (a
   * string) when the file must be read whole instead.
   */
  continueFile?(
    file: string,
    from: { offset: number; state: unknown; messages: number },
    stored: StoredSession,
  ): Continued | string;
  /**
   * What must be unchanged for the unit to be skipped on the next ingest; default: the file's size, mtime and
   * inode. A database adds its -wal file; a storage-tree session adds its message and part files.
   */
  fingerprint?(file: string, stat: Stats): Fingerprint;
  /** Directories this format reads through another file (never walked on their own). */
  prune?(dir: string): boolean;
}
