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
  sessions: ParsedSession[];
  spawns: Spawn[];
  warnings: Warning[];
  notes: string[];
  /** Lines read (non-empty), lines skipped. */
  lines: number;
  skipped: number;
  /** Byte offset after the last complete line: what the next incremental read starts from. */
  parsedBytes: number;
}

/** One log format. All adapters have this shape. */
export interface SourceAdapter {
  agent: AgentId;
  /** Does this file belong to this format? Cheap: looks at the name and the first lines only. */
  detect(file: string): boolean;
  /** Default places this agent keeps its logs on this machine. */
  defaultRoots(): string[];
  parseFile(file: string): FileResult;
}
