// The files a run's verdict is written to besides stdout (--junit, --report): checked before anything runs, then
// written as export writes its companions (export/sink.ts `writeWhole`): a file whole, beside it then renamed onto
// it (through a link, onto its target); a device or FIFO in place, never replaced by a file.
import { existsSync, realpathSync, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SinkError, writeWhole } from '../export/sink.js';
import type { Db } from '../store/db.js';
import { SourceFiles } from '../store/files.js';
import { RunStore } from '../store/runs.js';
import { ExitCode, UserError } from './errors.js';

/** The files `--report FILE` writes: FILE.md and FILE.html (FILE may end in .md already). */
export const markdownFile = (file: string): string => (file.endsWith('.md') ? file : `${file}.md`);
export const htmlFile = (file: string): string => `${file.replace(/\.md$/, '')}.html`;

/**
 * The files `--junit` and `--report` name, refused before anything runs when they cannot be written at all — a
 * folder, a socket, or a folder that does not exist — rather than found at the end of a long run.
 */
export function checkReportFiles(options: {
  junit?: string | undefined;
  report?: string | undefined;
  /** The store the command reads: none of the files may be it, or a log it was read from. */
  store?: Db | undefined;
  /** Files the command reads (`--gates FILE`): none of the files may be one of them. */
  inputs?: readonly (readonly [string, string | undefined])[];
}): void {
  const targets: [string, string][] = [
    ...(options.junit ? [['--junit', options.junit] as [string, string]] : []),
    ...(options.report
      ? [markdownFile(options.report), htmlFile(options.report)].map(
          (file) => ['--report', file] as [string, string],
        )
      : []),
  ];
  apart(targets, options.inputs);
  if (options.store !== undefined) {
    notAnInput(options.store, targets);
    notAPairsFile(options.store, targets);
  }
  // FILE.md and FILE.html are written beside FILE: beside a device or a pipe (`--report /dev/null`) they would be
  // files made in /dev, or next to a FIFO, which no one meant.
  const { report } = options;
  const named = report === undefined ? undefined : statSync(report, { throwIfNoEntry: false });
  if (report !== undefined && named && !named.isFile() && !named.isDirectory())
    throw new UserError(
      `--report ${report} is not a file: it names the files ${markdownFile(report)} and ${htmlFile(report)} to write beside it`,
      'name a file (without .md or .html), e.g. --report replay-report',
    );
  for (const [option, target] of targets) {
    const stats = statSync(target, { throwIfNoEntry: false });
    if (stats?.isDirectory()) throw new UserError(`${option}: ${target} is a directory`, 'name a file');
    if (stats?.isSocket())
      throw new UserError(
        `${option}: ${target} is a socket, which cannot be opened as a file`,
        'name a file',
      );
    if (!existsSync(dirname(target)))
      throw new UserError(
        `${option}: cannot write ${target}: its folder ${dirname(target)} does not exist`,
        'create it first, or name a file in a folder that exists',
      );
  }
}

/** Writes a verdict's file (see above); one that cannot be written is said in words: exit 1. */
export async function writeVerdict(path: string, text: string): Promise<void> {
  try {
    await writeWhole(path, text);
  } catch (error) {
    if (error instanceof SinkError) throw new UserError(error.message, error.hint, ExitCode.failure);
    throw error;
  }
}

/** Refuses an output that is one of the command's inputs: the store (see notTheStore) or a log it was read from. */
export function notAnInput(store: Db, outputs: readonly (readonly [string, string | undefined])[]): void {
  notTheStore(store.name, outputs);
  notALog(store, outputs);
}

/**
 * Refuses two outputs of one command that are the same file (`--out X --junit X`, `--out R.md --report R`): the
 * one written last would take the place of the other — a run's pairs replaced by its JUnit file at the end. By path
 * and, for a path that exists, by file; a device or a FIFO (`/dev/null` for both) may take both.
 */
export function apart(
  outputs: readonly (readonly [string, string | undefined])[],
  /** Files the command reads (`--gates`, `--system-prompt`): none of the outputs may be one of them either. */
  inputs: readonly (readonly [string, string | undefined])[] = [],
): void {
  const seen: {
    option: string;
    path: string;
    out: string;
    stats: Stats | undefined;
    read: boolean;
  }[] = [];
  const look = (option: string, path: string, read: boolean) => {
    const out = resolve(path);
    const stats = statOf(out);
    if (stats && !stats.isFile()) return;
    const same = seen.find((other) => (!read || !other.read) && sameFile(other.out, other.stats, out, stats));
    if (same?.read)
      throw new UserError(
        `${option} ${path} is the file ${same.option} ${same.path} names, which this command reads: writing there would destroy it`,
        'pass another file',
      );
    if (same)
      throw new UserError(
        `${option} ${path} is the file ${same.option} ${same.path} writes too: one would take the place of the other`,
        'pass another file to one of them',
      );
    seen.push({ option, path, out, stats, read });
  };
  for (const [option, path] of inputs) if (path !== undefined) look(option, path, true);
  for (const [option, path] of outputs) if (path !== undefined) look(option, path, false);
}

/**
 * Refuses an output that is a pairs file a replay run of the store wrote (`export --out` on the very file `--from
 * run:…` reads, a report over pairs): the model's answers in it would be gone, and with them the run's pairs,
 * which only replaying again (and paying for the model again) could give back. Compared by path and, for a path
 * that exists, by file. `replay --out` itself may add to one (--append) and is not asked.
 */
export function notAPairsFile(store: Db, outputs: readonly (readonly [string, string | undefined])[]): void {
  // Files only: a run that streamed its pairs to a device or a pipe (/dev/null, /dev/stdout) kept none there.
  const pairs = new RunStore(store)
    .outFiles()
    .map((kept) => ({ ...kept, held: statOf(kept.file) }))
    .filter(({ held }) => held === undefined || held.isFile());
  for (const [option, path] of outputs) {
    if (path === undefined) continue;
    const out = resolve(path);
    const stats = statOf(out);
    if (stats && !stats.isFile()) continue;
    const hit = pairs.find(({ file, held }) => sameFile(file, held, out, stats));
    if (hit)
      throw new UserError(
        `${option} ${path} holds the pairs of replay run ${hit.run}: writing there would destroy them`,
        'pass another file',
      );
  }
}

/**
 * Refuses an output that is the store itself or one of SQLite's files beside it (`--out` and `--db` swapped, a
 * tab completion too far): written there, a dataset or a pairs file would take the place of every ingested
 * session. Compared by path and, for a path that exists, by file (a link to the store is the store).
 */
function notTheStore(db: string, outputs: readonly (readonly [string, string | undefined])[]): void {
  const store = resolve(db);
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    const file = store + suffix;
    const held = statSync(file, { throwIfNoEntry: false });
    for (const [option, path] of outputs) {
      if (path === undefined) continue;
      const out = resolve(path);
      const stats = held && statSync(out, { throwIfNoEntry: false });
      if (sameFile(file, held, out, stats))
        throw new UserError(
          `${option} ${path} is ${suffix ? `SQLite's ${suffix.slice(1)} file of ` : ''}the store (--db ${db}): writing there would destroy it`,
          'pass another file',
        );
    }
  }
}

/**
 * Refuses an output that is an agent's log the store was read from: a dataset or a pairs file written there would
 * take the place of the agent's own history, which nothing here can give back.
 */
function notALog(db: Db, outputs: readonly (readonly [string, string | undefined])[]): void {
  const files = new SourceFiles(db);
  for (const [option, path] of outputs) {
    if (path === undefined) continue;
    const resolved = resolve(path);
    const names = existsSync(resolved) ? [resolved, realpathSync(resolved)] : [resolved];
    const log = names.map((name) => files.get(name)).find((row) => row !== undefined);
    if (log)
      throw new UserError(
        `${option} ${path} is a ${log.agent} log the store was read from: writing there would destroy it`,
        'pass another file',
      );
  }
}

/** The file's stats, or undefined where there is none to be had (missing, below a file, not ours to look at). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Two paths name one file: the same path, or (both there) the same device and inode, through links too. */
function sameFile(a: string, aStats: Stats | undefined, b: string, bStats: Stats | undefined): boolean {
  return (
    a === b ||
    (aStats !== undefined && bStats !== undefined && aStats.dev === bStats.dev && aStats.ino === bStats.ino)
  );
}
