import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writevSync,
} from 'node:fs';
import { causeOf, SinkError } from '../export/sink.js';
import { readLines } from '../sources/lines.js';
import type { ChatMessage, ChatTool } from './chat.js';
import { type FieldJson, itemsParts, JsonParts, listBytes, objectParts } from './memo.js';
import type { Wire } from './wire.js';

export const pairSchema = 'replay-history.pair/v2';

/** The schemas a pairs file may hold: v1 (before the agent's own request was kept) is still read. */
export const pairSchemas = ['replay-history.pair/v1', pairSchema] as const;

/**
 * Where a pair's system prompt and tools came from: the agent's own request (`recorded` in its log, or `agent`
 * when the real agent built it during the replay), our per-agent `catalogue` (the log has none), or the
 * user's `--system-prompt` (`option`).
 */
export interface PairSources {
  system: 'recorded' | 'agent' | 'catalogue' | 'option';
  tools: 'recorded' | 'agent' | 'catalogue';
  /**
   * With `tools: catalogue`, which list: `codex/0.169` (what Codex CLI 0.169 and later offered, from its real
   * requests) or `replay-history/<agent>` (the catalogue written here).
   */
  tool_list?: string;
}

/** One line of pairs.jsonl: a model turn asked again, with what the original model answered. */
export interface Pair {
  schema: (typeof pairSchemas)[number];
  run: string;
  session: string;
  agent: string;
  turn: number;
  mode: 'forced' | 'free';
  model: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  completion: Extract<ChatMessage, { role: 'assistant' }>;
  original: Extract<ChatMessage, { role: 'assistant' }> | null;
  match: { tool_calls: string };
  usage: { prompt_tokens: number; completion_tokens: number };
  latency_ms: number;
  finish_reason: string | null;
  /** v2: where `messages[0]` (the system prompt) and `tools` came from. */
  sources?: PairSources;
  /** v2: the `tool_call_id`s among `messages` whose result was an error (chat form has no field for it). */
  tool_errors?: string[];
  /** v2: the request on the agent's own wire (Claude Code: Anthropic Messages; Codex: OpenAI Responses). */
  wire?: Wire;
  /**
   * v2, a real agent's step whose request was recorded: what of it differs from the recorded request —
   * `system`, `tools`, `messages[i]` — after harness text was taken from the recording (empty: identical).
   */
  differs_from_recording?: string[];
}

export class PairsFileError extends Error {}

/**
 * Appends pairs to a JSON-lines file, each line written whole with one write and flushed to the file as it is
 * made, so a killed run loses at most the turns in flight. Opening for a resume first cuts a torn last line
 * (a kill in the middle of a write), so the file never holds half a pair.
 */
export class PairsWriter {
  private readonly fd: number;

  private constructor(
    readonly path: string,
    fd: number,
    /** The run whose pairs these are (named in the hint of a write that failed). */
    private readonly run: string,
    /** Written to something that is not a file (see `open`'s `stream`). */
    private readonly stream = false,
  ) {
    this.fd = fd;
  }

  /**
   * `mode`: `new` refuses a file that already has content; `append` adds to it; `resume` adds after cutting a
   * torn tail; `stream` writes to what is not a file (a pipe, `/dev/stdout`, a device), opened for writing only
   * and never read back: a descriptor opened to read too would be a reader of its own pipe, and a write into a
   * pipe whose reader left would wait for ever instead of failing. Returns the writer and, for append/resume,
   * the (session, turn) keys of this run already in it.
   */
  static open(
    path: string,
    mode: 'new' | 'append' | 'resume' | 'stream',
    run: string,
    onExisting?: (pair: Pair) => void,
  ): { writer: PairsWriter; done: Set<string>; cut: number } {
    if (mode === 'stream') {
      let fd: number;
      try {
        fd = openSync(path, 'a');
      } catch (error) {
        throw said(path, error, 'nothing was written to it');
      }
      return { writer: new PairsWriter(path, fd, run, true), done: new Set(), cut: 0 };
    }
    if (mode === 'new' && existsSync(path) && fstatSizeOf(path) > 0) {
      throw new PairsFileError(`${path} already holds pairs`);
    }
    const fd = openSync(path, 'a+');
    let cut = 0;
    const done = new Set<string>();
    try {
      cut = cutTornTail(fd);
      if (mode !== 'new') {
        for (const line of readLines(path)) {
          try {
            const pair = JSON.parse(line.text) as Pair;
            if (pair.run === run && pair.session && typeof pair.turn === 'number') {
              done.add(`${pair.session}#${pair.turn}`);
              onExisting?.(pair);
            }
          } catch (error) {
            if (error instanceof SyntaxError) {
              throw new PairsFileError(
                `${path}:${line.number}: not a valid pair line; it was not written by this tool`,
              );
            }
            throw error;
          }
        }
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return { writer: new PairsWriter(path, fd, run), done, cut };
  }

  /**
   * Takes the pairs of `run` for these sessions out of the file (a session replayed again from its start
   * supersedes them). The file is rewritten beside itself and renamed over, so a kill leaves either the old
   * file or the new one, never a mix. Returns how many pairs were taken out; the file is untouched when none.
   */
  static supersede(path: string, run: string, sessions: ReadonlySet<string>): number {
    const temporary = `${path}.${process.pid}.tmp`;
    let removed = 0;
    const fd = openSync(temporary, 'wx');
    try {
      const lines = readLines(path, {
        onOversize: (line) => {
          throw new PairsFileError(`${path}:${line.number}: a line of ${line.bytes} bytes cannot be kept`);
        },
      });
      for (const line of lines) {
        const pair = JSON.parse(line.text) as Pair;
        if (pair.run === run && sessions.has(pair.session)) {
          removed++;
          continue;
        }
        writeAllParts(fd, [Buffer.from(`${line.text}\n`)]);
      }
      fsyncSync(fd);
    } catch (error) {
      closeSync(fd);
      rmSync(temporary, { force: true });
      throw error;
    }
    closeSync(fd);
    if (removed === 0) rmSync(temporary);
    else renameSync(temporary, path);
    return removed;
  }

  /**
   * `known`: JSON already made of some of the pair's fields (the messages, for the request body and digest). A
   * write that fails (a full disk, a reader gone) is said as a SinkError: the path, the cause in words.
   */
  write(pair: Pair, known?: KnownJson): void {
    try {
      writeAllParts(this.fd, pairParts(pair, known).text('\n').done());
    } catch (error) {
      throw said(
        this.path,
        error,
        this.stream
          ? 'every pair before this one was written to it'
          : `every pair before this one is in the file; replay-history replay --resume ${this.run} goes on from it once the cause is mended`,
      );
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A system error opening or writing the pairs as a SinkError (the path, the cause in words); any other as it is. */
function said(path: string, error: unknown, hint: string): unknown {
  const { code, cause } = causeOf(error);
  return code === undefined ? error : new SinkError(path, code, cause, hint);
}

/** JSON a caller already made of a pair's fields, used as is. */
export interface KnownJson {
  messages?: JsonParts;
}

/**
 * The UTF-8 of `JSON.stringify(pair)`, byte for byte, but the lists that are the same for every turn of a
 * session — the tool list, the wire's tools and system blocks, together half of each line — and the messages
 * and content blocks turns share are encoded once each (kept while the list or item lives) instead of once per
 * turn.
 */
export function pairParts(pair: Pair, known: KnownJson = {}): JsonParts {
  return objectParts(pair as unknown as Record<string, unknown>, (key, value) => {
    if (key === 'messages' && known.messages !== undefined) return known.messages;
    if (key === 'tools') return listBytes(value);
    if (key === 'wire' && isRecord(value)) return objectParts(value, wireField);
    return JSON.stringify(value);
  });
}

function wireField(key: string, value: unknown): FieldJson {
  if (key === 'body' && isRecord(value)) {
    return objectParts(value, (field, part) =>
      field === 'tools' || field === 'system'
        ? listBytes(part)
        : field === 'messages' && Array.isArray(part)
          ? wireMessagesParts(part)
          : JSON.stringify(part),
    );
  }
  return JSON.stringify(value);
}

/** A wire message list's JSON, each message's content blocks encoded once (they are shared between turns). */
function wireMessagesParts(messages: readonly unknown[]): JsonParts {
  const into = new JsonParts().text('[');
  messages.forEach((message, index) => {
    if (index > 0) into.text(',');
    if (!isRecord(message)) into.text(JSON.stringify(message) ?? 'null');
    else
      objectParts(
        message,
        (key, value) =>
          key === 'content' && Array.isArray(value) ? itemsParts(value) : JSON.stringify(value),
        into,
      );
  });
  return into.text(']');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A line's pieces with one gathering write (`writev`; libuv splits it at the system's limit of pieces), not
 * copied into one buffer first. The loop only continues a short write, from the first byte not written (a full
 * disk raises there instead).
 */
function writeAllParts(fd: number, pieces: readonly Buffer[]): void {
  let rest = pieces;
  while (rest.length > 0) rest = unwritten(rest, writevSync(fd, rest as Buffer[]));
}

/** What of `pieces` is left after the first `written` bytes of them were written. */
export function unwritten(pieces: readonly Buffer[], written: number): readonly Buffer[] {
  let index = 0;
  let left = written;
  while (index < pieces.length && left >= (pieces[index] as Buffer).length) {
    left -= (pieces[index] as Buffer).length;
    index++;
  }
  const partial = pieces[index];
  return partial !== undefined && left > 0
    ? [partial.subarray(left), ...pieces.slice(index + 1)]
    : pieces.slice(index);
}

function fstatSizeOf(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

/** Removes bytes after the last newline (a line a killed writer did not finish). Returns how many. */
function cutTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const read = readSync(fd, chunk, 0, end - start, start);
    const newline = chunk.subarray(0, read).lastIndexOf(10);
    if (newline !== -1) {
      const keep = start + newline + 1;
      if (keep < size) ftruncateSync(fd, keep);
      return size - keep;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
  return size;
}
