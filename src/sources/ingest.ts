import type { Stats } from 'node:fs';
import { type Message, toolCalls } from '../model/session.js';
import type { Db } from '../store/db.js';
import { SourceFiles } from '../store/files.js';
import { SessionStore } from '../store/sessions.js';
import { discover, unreadable } from './discover.js';
import { withHeads } from './jsonl.js';
import { adapters } from './registry.js';
import type { Fingerprint, ParsedSession, SourceAdapter, Warning } from './types.js';

/** What one path given to `ingest` came to. */
export interface PathSummary {
  path: string;
  /** The path could not be read at all (it does not exist, or cannot be opened). */
  error?: string;
  files: { read: number; unchanged: number; ignored: number; failed: number };
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
    files: { read: 0, unchanged: 0, ignored: 0, failed: 0 },
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
  /** Called after each file larger than `largeFile` bytes (the CLI collects garbage there). */
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

  const unchanged = new Map<PathSummary, string[]>();
  const forks: Fork[] = [];
  for (const { summary, found } of summaries) {
    // Main transcripts before sub-agent files, so a parent exists before its children when both are new.
    found.sort((a, b) => Number(a.file.includes('/subagents/')) - Number(b.file.includes('/subagents/')));
    const skipped: string[] = [];
    for (const { file, stat, explicit } of found) {
      const fate = ingestFile(db, store, files, file, stat, explicit, summary, forks);
      if (fate === 'read' && stat.size > largeFile) afterLargeFile?.();
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
    // One transaction per unit: an interrupted ingest leaves the store as it was before this unit.
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
      });
    })();
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
  summary.warnings.push(...parsed.warnings);
  summary.notes.push(...parsed.notes.map((note) => `${file}: ${note}`));
  summary.lines += parsed.lines;
  summary.skippedLines += parsed.skipped;
  summary.messages += counted.messages;
  summary.toolCalls += counted.toolCalls;
  summary.rewritten.messages += counted.rewritten.messages;
  summary.rewritten.toolCalls += counted.rewritten.toolCalls;
  for (const outcome of ['new', 'updated', 'unchanged'] as const)
    summary.sessions[outcome] += counted.outcomes[outcome];
  summary.files.read++;
  return 'read';
}
