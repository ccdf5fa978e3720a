import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, type Stats } from 'node:fs';
import { type Message, toolCalls } from '../model/session.js';
import type { Db } from '../store/db.js';
import { fullDisk, StoreError } from '../store/errors.js';
import { SourceFiles } from '../store/files.js';
import { SessionStore } from '../store/sessions.js';
import { discover, unreadable } from './discover.js';
import { withHeads } from './jsonl.js';
import { adapters } from './registry.js';
import type {
  Fingerprint,
  ParsedSession,
  ReadReport,
  Resume,
  SourceAdapter,
  StoredSession,
  Warning,
} from './types.js';

/** What one path given to `ingest` came to. */
export interface PathSummary {
  path: string;
  /** The path could not be read at all (it does not exist, or cannot be opened). */
  error?: string;
  /** `continued`: of the files read, those read only from where the last ingest stopped (their new bytes). */
  files: { read: number; continued: number; unchanged: number; ignored: number; failed: number };
  /** Each ignored file and why: nothing in it was a session log to read. */
  ignored: IgnoredFile[];
  /** `unchanged` also counts the sessions stored from files skipped as unchanged (not read again). */
  sessions: { new: number; updated: number; unchanged: number };
  /** Messages this ingest added: all of a new session's, only the new ones of a session that grew. */
  messages: number;
  /** Tool calls in the added messages. */
  toolCalls: number;
  /** Sessions whose earlier messages changed are stored again whole: their messages and tool calls. */
  rewritten: { messages: number; toolCalls: number };
  lines: number;
  skippedLines: number;
  warnings: Warning[];
  notes: string[];
}

export interface IgnoredFile {
  file: string;
  reason: 'empty file' | 'not a session log of any supported agent';
}

/** Called after each file with files done, total files, bytes done and total bytes. */
export type IngestProgress = (done: number, total: number, bytes: number, totalBytes: number) => void;

function emptySummary(path: string): PathSummary {
  return {
    path,
    files: { read: 0, continued: 0, unchanged: 0, ignored: 0, failed: 0 },
    ignored: [],
    sessions: { new: 0, updated: 0, unchanged: 0 },
    messages: 0,
    toolCalls: 0,
    rewritten: { messages: 0, toolCalls: 0 },
    lines: 0,
    skippedLines: 0,
    warnings: [],
    notes: [],
  };
}

const pruned = (dir: string): boolean => adapters.some((adapter) => adapter.prune?.(dir) ?? false);

function fingerprint(adapter: SourceAdapter | undefined, file: string, stat: Stats): Fingerprint {
  return adapter?.fingerprint?.(file, stat) ?? { size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino };
}

/** An error met while reading the input (not while writing the store): that unit fails, the run goes on. */
class InputError extends Error {}

function adapterFor(file: string, warnings: Warning[]): SourceAdapter | undefined {
  return withHeads(() => {
    for (const adapter of adapters) {
      try {
        if (adapter.detect(file)) return adapter;
      } catch (error) {
        warnings.push(unreadable(file, error));
        return undefined;
      }
    }
    return undefined;
  });
}

/**
 * Reads every session log under the given paths into the store. Each file is written in one transaction:
 * an interrupted ingest leaves the store as it was before the file in progress. A file whose size, mtime and
 * inode are what the store last saw is not read again.
 */
export interface IngestOptions {
  progress?: IngestProgress;
  /**
   * Called after each file read that is larger than `largeFile` bytes, and after four times that read in smaller
   * ones (the CLI collects garbage there).
   */
  afterLargeFile?: () => void;
  largeFile?: number;
}

export function ingest(db: Db, paths: string[], options: IngestOptions = {}): PathSummary[] {
  const { progress, afterLargeFile, largeFile = 4 * 1024 * 1024 } = options;
  const store = new SessionStore(db);
  const files = new SourceFiles(db);
  const summaries = paths.map((path) => {
    const summary = emptySummary(path);
    try {
      return { summary, found: discover(path, summary.warnings, pruned) };
    } catch (error) {
      summary.error = (error as Error).message;
      return { summary, found: [] };
    }
  });
  const total = summaries.reduce((n, s) => n + s.found.length, 0);
  const totalBytes = summaries.reduce((n, s) => n + s.found.reduce((b, f) => b + f.stat.size, 0), 0);
  let done = 0;
  let bytes = 0;
  /** Bytes read since garbage was last collected. */
  let read = 0;

  const unchanged = new Map<PathSummary, string[]>();
  const forks: Fork[] = [];
  for (const { summary, found } of summaries) {
    // Main transcripts before sub-agent files, so a parent exists before its children when both are new.
    found.sort((a, b) => Number(a.file.includes('/subagents/')) - Number(b.file.includes('/subagents/')));
    const skipped: string[] = [];
    for (const { file, stat, explicit } of found) {
      let fate: ReturnType<typeof ingestFile>;
      try {
        fate = ingestFile(db, store, files, file, stat, explicit, summary, forks);
      } catch (error) {
        // Nothing more can be stored: said with the log it stopped at (each log is stored whole or not at all).
        const full = fullDisk(db.name, error, true);
        if (!full) throw error;
        throw new StoreError(
          `${full.message} while storing ${file} (file ${done + 1} of ${total}): the logs before it are in the store, it and the ${total - done - 1} after it are not`,
          'free some space there and run ingest again: it goes on from there, the logs already stored skipped',
          full.exitCode,
        );
      }
      if (fate === 'read') {
        read += stat.size;
        // After a large file, or as much read in smaller ones: what they left is collected before it piles up.
        if (stat.size > largeFile || read > 4 * largeFile) {
          afterLargeFile?.();
          read = 0;
        }
      }
      if (fate === 'unchanged') skipped.push(file);
      done++;
      bytes += stat.size;
      progress?.(done, total, bytes, totalBytes);
    }
    if (skipped.length > 0) unchanged.set(summary, skipped);
  }
  // Counted once everything is stored: a session another file of this ingest took over (a sub-agent's own file
  // read after its mirror in the parent) is that file's, and is counted there, never twice.
  if (unchanged.size > 0) {
    const perFile = store.countPerFile();
    for (const [summary, skipped] of unchanged)
      for (const file of skipped) summary.sessions.unchanged += perFile.get(file) ?? 0;
  }
  // Said once everything is stored: the parent of a fork may come later in the same ingest.
  for (const fork of forks) {
    if (store.row(fork.parent)) continue;
    fork.summary.warnings.push({
      file: fork.file,
      message: `a fork of session ${fork.parentSource} (the first ${fork.line} lines of its log): that log is not in the store, so this session's contexts lack the history it inherited; ingest it too, in any order`,
    });
  }
  return summaries.map((s) => s.summary);
}

/** A session of this ingest that continues another by the lines of its log (a 0.169 Codex fork). */
interface Fork {
  summary: PathSummary;
  file: string;
  parent: string;
  parentSource: string;
  line: number;
}

const callsIn = (messages: readonly Message[]): number =>
  messages.reduce((n, message) => n + toolCalls(message).length, 0);

/** Reads one file into the store, unless it is unchanged, not a log, or unreadable. */
function ingestFile(
  db: Db,
  store: SessionStore,
  files: SourceFiles,
  file: string,
  stat: Stats,
  explicit: boolean,
  summary: PathSummary,
  forks: Fork[],
): 'read' | 'unchanged' | 'ignored' | 'failed' {
  // Only a path given on the command line can be something else (the walk takes regular files only): a pipe from
  // `<(…)`, /dev/stdin, a device. Its bytes cannot be read twice (detection, then the read) nor again next time,
  // and what a reader takes from a log's name (Claude Code's session id, a Codex rollout's) is not there: said and
  // counted as unreadable rather than taken for an empty file.
  if (!stat.isFile()) {
    summary.files.failed++;
    summary.warnings.push({
      file,
      message: `not a regular file (${kindOf(stat)}): ingest reads logs as the agents write them, by path; save it to a file under its own name first`,
      unreadable: true,
    });
    return 'failed';
  }
  if (stat.size === 0) {
    if (explicit) summary.notes.push(`${file}: empty file, nothing to ingest`);
    summary.files.ignored++;
    summary.ignored.push({ file, reason: 'empty file' });
    return 'ignored';
  }
  const known = files.get(file);
  if (known) {
    const reader = adapters.find((adapter) => adapter.agent === known.agent);
    const print = fingerprint(reader, file, stat);
    if (
      known.size === print.size &&
      known.mtime_ms === print.mtimeMs &&
      known.inode === print.ino &&
      known.parser === reader?.version
    ) {
      summary.files.unchanged++;
      return 'unchanged';
    }
  }
  if (known?.resume) {
    const reader = adapters.find((adapter) => adapter.agent === known.agent);
    if (reader?.continueFile && known.parser === reader.version) {
      const fate = continueRead(db, store, files, reader, known, file, stat, summary);
      if (fate) return fate;
    }
  }
  const before = summary.warnings.length;
  const adapter = adapterFor(file, summary.warnings);
  if (!adapter && summary.warnings.length > before) {
    summary.files.failed++;
    return 'failed';
  }
  if (!adapter) {
    if (explicit)
      summary.warnings.push({ file, message: 'not a session log of any supported agent; skipped' });
    summary.files.ignored++;
    summary.ignored.push({ file, reason: 'not a session log of any supported agent' });
    return 'ignored';
  }
  // Taken before reading: a log that grows while it is read must look changed next time.
  const print = fingerprint(adapter, file, stat);
  let parsed: ReturnType<SourceAdapter['parseFile']>;
  try {
    parsed = adapter.parseFile(file);
  } catch (error) {
    summary.files.failed++;
    summary.warnings.push(unreadable(file, error));
    return 'failed';
  }
  const sessions = parsed.sessions[Symbol.iterator]();
  const next = (): IteratorResult<ParsedSession> => {
    try {
      return sessions.next();
    } catch (error) {
      throw new InputError((error as Error).message);
    }
  };
  const counted = {
    messages: 0,
    toolCalls: 0,
    rewritten: { messages: 0, toolCalls: 0 },
    outcomes: { new: 0, updated: 0, unchanged: 0 },
  };
  try {
    // One transaction per unit: an interrupted ingest leaves the store as it was before this unit. IMMEDIATE (the
    // write lock first), as every write transaction of the store: a deferred one that has read before another
    // process's commit cannot write at all (SQLite answers busy at once, without waiting), so two ingests at once
    // (hooks after the turns of two sessions) would fail instead of taking turns.
    db.transaction(() => {
      for (let step = next(); !step.done; step = next()) {
        const session = step.value;
        const { outcome, added, rewritten, stored } = store.save(session, file);
        const { continues } = session;
        if (continues?.line !== undefined)
          forks.push({
            summary,
            file,
            parent: continues.sessionId,
            parentSource: continues.sourceId ?? continues.sessionId,
            line: continues.line,
          });
        if (outcome === 'kept') continue;
        counted.outcomes[outcome]++;
        if (rewritten) {
          counted.rewritten.messages += stored.messages;
          counted.rewritten.toolCalls += stored.toolCalls;
        } else if (added > 0) {
          // What was added is the tail of the session (a copied history the store leaves out is its head).
          counted.messages += added;
          counted.toolCalls += callsIn(session.messages.slice(session.messages.length - added));
        }
      }
      for (const spawn of parsed.spawns) store.saveSpawn(spawn, adapter.agent);
      files.put({
        path: file,
        agent: adapter.agent,
        size: print.size,
        mtime_ms: print.mtimeMs,
        inode: print.ino,
        parsed_bytes: parsed.parsedBytes,
        parser: adapter.version,
        resume: resumeJson(file, parsed.parsedBytes, parsed.resume),
      });
    }).immediate();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    summary.files.failed++;
    summary.warnings.push(...parsed.warnings, {
      file,
      message: `${error.message}; nothing from it was stored`,
      unreadable: true,
    });
    return 'failed';
  }
  countRead(summary, file, parsed);
  summary.messages += counted.messages;
  summary.toolCalls += counted.toolCalls;
  summary.rewritten.messages += counted.rewritten.messages;
  summary.rewritten.toolCalls += counted.rewritten.toolCalls;
  for (const outcome of ['new', 'updated', 'unchanged'] as const)
    summary.sessions[outcome] += counted.outcomes[outcome];
  return 'read';
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a pipe or FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a file';
}

/** What any read of a file adds to its path's summary: its warnings, notes, lines, and the file itself. */
function countRead(summary: PathSummary, file: string, read: ReadReport): void {
  summary.warnings.push(...read.warnings);
  summary.notes.push(...read.notes.map((note) => `${file}: ${note}`));
  summary.lines += read.lines;
  summary.skippedLines += read.skipped;
  summary.files.read++;
}

/** What the store keeps of a reader's state: the state, and a check of the bytes read so far. */
interface StoredResume extends Resume {
  check: string;
}

/** How many bytes at each end of what was read the check covers. */
const checkBytes = 4096;

/**
 * A digest of the first and the last 4 KiB before `offset`: a log that is only appended to keeps them; one that
 * was rewritten (truncated, edited, replaced by a copy) almost surely does not.
 */
function bytesCheck(file: string, offset: number): string {
  const fd = openSync(file, 'r');
  try {
    const hash = createHash('sha256').update(String(offset));
    const buffer = Buffer.allocUnsafe(checkBytes);
    const head = Math.min(checkBytes, offset);
    hash.update(buffer.subarray(0, readSync(fd, buffer, 0, head, 0)));
    const tail = Math.min(checkBytes, offset);
    hash.update(buffer.subarray(0, readSync(fd, buffer, 0, tail, offset - tail)));
    return hash.digest('hex');
  } finally {
    closeSync(fd);
  }
}

/**
 * Where new lines start after a read that stopped at `offset`. A writer caught between a line and its newline
 * leaves a last line that parses whole: that read took it, and the newline written after it belongs to it.
 * Undefined when the bytes at `offset` continue that line (it was not finished when it was read).
 */
function linesFrom(file: string, offset: number): number | undefined {
  if (offset === 0) return 0;
  const fd = openSync(file, 'r');
  try {
    const bytes = Buffer.alloc(3);
    const got = readSync(fd, bytes, 0, 3, offset - 1);
    if (bytes[0] === 0x0a) return offset;
    if (got >= 2 && bytes[1] === 0x0a) return offset + 1;
    if (got >= 3 && bytes[1] === 0x0d && bytes[2] === 0x0a) return offset + 2;
    return got === 1 ? offset : undefined;
  } finally {
    closeSync(fd);
  }
}

function resumeJson(file: string, offset: number, resume: Resume | undefined): string | null {
  if (!resume) return null;
  const stored: StoredResume = { ...resume, check: bytesCheck(file, offset) };
  return JSON.stringify(stored);
}

/**
 * Reads a grown file on from where the last ingest stopped, when its reader can and the bytes already read are
 * unchanged. Undefined: read it whole instead (why is said in a note).
 */
function continueRead(
  db: Db,
  store: SessionStore,
  files: SourceFiles,
  reader: SourceAdapter,
  known: NonNullable<ReturnType<SourceFiles['get']>>,
  file: string,
  stat: Stats,
  summary: PathSummary,
): 'read' | 'failed' | undefined {
  const offset = known.parsed_bytes;
  const whole = (why: string): undefined => {
    summary.notes.push(`${file}: read again whole, not continued from byte ${offset}: ${why}`);
    return undefined;
  };
  const print = fingerprint(reader, file, stat);
  if (print.ino !== known.inode) return whole('it is another file now (its inode changed)');
  if (print.size < offset) return whole('it is shorter than what was read of it: it was rewritten');
  let resume: StoredResume;
  let check: string;
  try {
    resume = JSON.parse(known.resume as string) as StoredResume;
    check = bytesCheck(file, offset);
  } catch (error) {
    return whole((error as Error).message);
  }
  if (check !== resume.check)
    return whole('the bytes already read changed: it was rewritten, not appended to');
  const start = linesFrom(file, offset);
  if (start === undefined) return whole('the last line read of it was not finished then');
  const row = store.row(resume.sessionId);
  if (!row) return whole(`its session ${resume.sessionId} is no longer in the store`);
  // A session whose head is a copied history keeps only its own messages: the reader's index is shifted.
  const shift = resume.messages - row.message_count;
  const stored: StoredSession = {
    messages: (index) => (index < shift ? undefined : store.messagesFrom(resume.sessionId, index - shift)),
    requestMessage: (hash) => store.requestMessage(resume.sessionId, hash),
  };
  let continued: ReturnType<NonNullable<SourceAdapter['continueFile']>>;
  try {
    continued = (reader.continueFile as NonNullable<SourceAdapter['continueFile']>)(
      file,
      { offset: start, state: resume.state, messages: resume.messages },
      stored,
    );
  } catch (error) {
    return whole((error as Error).message);
  }
  if (typeof continued === 'string') return whole(continued);
  // A copied history is found by comparing the session's first messages with the other's: while the change
  // reaches the first message the session holds of its own, that comparison may come out another way.
  if (continued.from < shift || (row.continues_session_id !== null && continued.from <= shift))
    return whole('the new lines may change the history it shares with another session');
  if (continued.requests && store.requestCount(continued.sessionId) !== continued.requests.from)
    return whole('its stored request records are not what the last read of it made');
  const result = continued;
  let saved: ReturnType<SessionStore['extend']> | undefined;
  db.transaction(() => {
    saved = store.extend(
      result.sessionId,
      result.from - shift,
      result.messages,
      result.meta,
      'file',
      file,
      result.requests,
    );
    for (const spawn of result.spawns) store.saveSpawn(spawn, reader.agent);
    files.put({
      path: file,
      agent: reader.agent,
      size: print.size,
      mtime_ms: print.mtimeMs,
      inode: print.ino,
      parsed_bytes: result.parsedBytes,
      parser: reader.version,
      resume: resumeJson(file, result.parsedBytes, result.resume),
    });
  }).immediate();
  const done = saved as ReturnType<SessionStore['extend']>;
  countRead(summary, file, result);
  // Counted as a full read counts it: a session whose stored messages changed is one stored again.
  if (done.rewritten) {
    summary.rewritten.messages += done.stored.messages;
    summary.rewritten.toolCalls += done.stored.toolCalls;
  } else {
    summary.messages += done.added;
    summary.toolCalls += callsIn(result.messages.slice(result.messages.length - done.added));
  }
  summary.sessions[done.outcome]++;
  // The file's other sessions (sub-agents it mirrors, other conversations) are as they were.
  summary.sessions.unchanged += store.countOf(file) - 1;
  summary.files.continued++;
  return 'read';
}
