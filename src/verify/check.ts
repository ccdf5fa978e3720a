import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { type Change, compare, pairRenames, settle } from './diff.js';
import { comparePaths, type Entry, parentOf, sameStat } from './entry.js';
import { hashFile, ManifestWriter, mergeSorted, readManifest, SortedLookup, walk } from './manifest.js';
import { Watcher, type WatcherStatus } from './watcher.js';

export interface CheckOptions {
  /** Directories to watch. */
  roots: readonly string[];
  /** Paths left out, each with everything below it (exact paths, not patterns). */
  exclude?: readonly string[];
  /** Where manifests are kept between runs, so unchanged files are not hashed again. */
  cacheDir?: string;
  /** Called every few thousand entries while a manifest is taken. */
  progress?: (phase: 'before' | 'after', entries: number) => void;
}

export interface Report {
  clean: boolean;
  roots: string[];
  excluded: string[];
  /** Changes the checked command (or replay) made, or that it cannot be told apart from: the verdict. */
  changes: Change[];
  /**
   * Changes provably made by another process (a replay's agent ran against a copy-on-write view of those
   * directories, or with them read-only): said, never counted against the run.
   */
  others: Change[];
  /** Entries whose content or listing could not be read: not checked, and said so. */
  gaps: { path: string; reason: string }[];
  manifest: {
    before: number;
    after: number;
    /** Files whose content was hashed in this run (the rest reused a hash from the cache). */
    hashed: number;
    hashedBytes: number;
    cached: number;
    beforeMs: number;
    afterMs: number;
  };
  watcher: WatcherStatus & {
    /** Changes the manifest proved that the watcher never reported (hard links from outside, overflow, …). */
    missed: number;
  };
  startedAt: string;
  finishedAt: string;
}

/** The path with symlinks in its existing part resolved, so it compares with what a walk produces. */
export function canonicalPath(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(canonicalPath(parent), basename(absolute));
}

/** Roots made canonical, duplicates and roots inside other roots dropped. */
export function canonicalRoots(paths: readonly string[]): string[] {
  const roots = [...new Set(paths.map(canonicalPath))].sort(comparePaths);
  return roots.filter(
    (root) => !roots.some((other) => other !== root && (other === '/' || root.startsWith(`${other}/`))),
  );
}

export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(env.HOME ?? homedir(), '.cache');
  return join(cache, 'replay-history', 'manifests');
}

/** A cached hash is not trusted for a file changed within this long of the cache being written (racy-git). */
const racyNs = 2_000_000_000n;

/**
 * The side-effect checker. `start` sets up the watcher and then takes the first manifest; `finish` waits for
 * the watcher to settle, takes the second manifest while comparing it with the first, and reports every
 * difference with the layers that saw it. The manifest is the verdict; the watcher only adds when, and what came
 * and went in between.
 */
export class Checker {
  /** The identity of each excluded path when the run started (see `identity`). */
  private readonly excludedBefore = new Map<string, string>();

  private constructor(
    private readonly roots: string[],
    private readonly excluded: Set<string>,
    private readonly watcher: Watcher,
    private readonly cacheDir: string,
    private readonly cacheFile: string,
    private readonly beforeFile: string,
    private readonly counts: Report['manifest'],
    private readonly gaps: Report['gaps'],
    private readonly startedAt: string,
    private readonly ownCache: boolean,
    private readonly progress?: CheckOptions['progress'],
  ) {}

  static async start(options: CheckOptions): Promise<Checker> {
    const roots = canonicalRoots(options.roots);
    let cacheDir = options.cacheDir ?? defaultCacheDir();
    let ownCache = false;
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    } catch {
      // No writable cache (read-only home): a private one for this run, removed at the end.
      cacheDir = mkdtempSync(join(tmpdir(), 'replay-history-verify-'));
      ownCache = true;
    }
    cacheDir = canonicalPath(cacheDir);
    removeStale(cacheDir);
    const excluded = new Set([...(options.exclude ?? []).map(canonicalPath), cacheDir]);
    const key = createHash('sha256')
      .update(JSON.stringify({ roots, excluded: [...excluded].sort() }))
      .digest('hex')
      .slice(0, 16);
    const cacheFile = join(cacheDir, `${key}.jsonl`);
    const beforeFile = join(cacheDir, `${key}.${process.pid}.${randomBytes(4).toString('hex')}.before`);
    const startedAt = new Date().toISOString();

    // The watcher first: whatever happens after the first manifest starts is then seen by both.
    const watcher = await Watcher.start(roots, [...excluded]);
    const counts: Report['manifest'] = {
      before: 0,
      after: 0,
      hashed: 0,
      hashedBytes: 0,
      cached: 0,
      beforeMs: 0,
      afterMs: 0,
    };
    const checker = new Checker(
      roots,
      excluded,
      watcher,
      cacheDir,
      cacheFile,
      beforeFile,
      counts,
      [],
      startedAt,
      ownCache,
      options.progress,
    );
    try {
      checker.takeBefore();
    } catch (error) {
      await watcher.stop();
      rmSync(beforeFile, { force: true });
      throw error;
    }
    return checker;
  }

  private hash(entry: Entry): void {
    const { hash, error } = hashFile(entry.path);
    if (hash) {
      entry.hash = hash;
      this.counts.hashed++;
      this.counts.hashedBytes += entry.size;
    } else entry.unreadable = error;
  }

  private takeBefore(): void {
    const started = performance.now();
    for (const path of this.excluded) this.excludedBefore.set(path, identity(path));
    let cache: SortedLookup | undefined;
    let cacheWritten = 0n;
    if (existsSync(this.cacheFile)) {
      try {
        cacheWritten = statSync(this.cacheFile, { bigint: true }).mtimeNs;
        cache = new SortedLookup(readManifest(this.cacheFile));
      } catch {
        cache = undefined;
      }
    }
    const writer = new ManifestWriter(this.beforeFile);
    try {
      for (const entry of walk(this.roots, this.excluded)) {
        if (entry.type === 'file' && !entry.unreadable) {
          const cached = cachedHash(cache, entry, cacheWritten);
          if (cached) {
            entry.hash = cached;
            this.counts.cached++;
          } else this.hash(entry);
        }
        writer.add(entry);
        if (writer.count % 5000 === 0) this.progress?.('before', writer.count);
      }
    } finally {
      writer.close();
    }
    this.counts.before = writer.count;
    this.counts.beforeMs = performance.now() - started;
  }

  async finish(): Promise<Report> {
    await this.watcher.settle();
    const started = performance.now();
    const afterFile = `${this.beforeFile.slice(0, -'.before'.length)}.after`;
    const writer = new ManifestWriter(afterFile);
    const changes: Change[] = [];
    const gone: Entry[] = [];
    const appeared: Entry[] = [];
    const present = new Set<string>();
    try {
      for (const [before, after] of mergeSorted(
        readManifest(this.beforeFile),
        walk(this.roots, this.excluded),
      )) {
        const path = (after ?? before)?.path as string;
        if (this.watcher.seen.has(path)) present.add(path);
        if (after) {
          if (after.type === 'file' && !after.unreadable) {
            if (before?.hash && sameStat(before, after)) after.hash = before.hash;
            else this.hash(after);
          }
          if (after.unreadable) this.gaps.push({ path: after.path, reason: after.unreadable });
          writer.add(after);
          if (writer.count % 5000 === 0) this.progress?.('after', writer.count);
        }
        if (before && after) {
          const change = compare(before, after);
          if (change) changes.push(change);
        } else if (before) gone.push(before);
        else if (after) appeared.push(after);
      }
    } finally {
      writer.close();
      // Timed without stopping the watcher (over 100 ms on a large tree): afterMs is the manifest's own cost.
      this.counts.afterMs = performance.now() - started;
      await this.watcher.stop();
    }
    this.counts.after = writer.count;
    changes.push(...pairRenames(gone, appeared));

    // What the watcher saw of paths in neither manifest: made and removed within the run.
    for (const [path, seen] of this.watcher.seen) {
      if (present.has(path) || this.isExcluded(path)) continue;
      changes.push({
        kind: 'created and deleted',
        path,
        // Gone before the second manifest, and the watcher does not say what it was.
        type: 'unknown',
        fields: [],
        detail: seen.created ? 'appeared and was removed during the run' : 'touched and gone by the end',
        layers: ['watcher'],
      });
    }
    let missed = 0;
    // An excluded entry made, removed or replaced changes the listing of the directory holding it: that directory
    // is not reported for it (as it is not for a reported entry).
    const explained = new Set<string>();
    for (const [path, before] of this.excludedBefore)
      if (identity(path) !== before) explained.add(parentOf(path));
    const settled = settle(changes, explained);
    for (const change of settled) {
      const seen =
        this.watcher.seen.get(change.path) ?? (change.from ? this.watcher.seen.get(change.from) : undefined);
      if (seen) {
        if (!change.layers.includes('watcher')) change.layers.push('watcher');
        change.time = new Date(seen.first).toISOString();
      } else if (!(change.type === 'directory' && change.kind === 'modified')) missed++;
    }

    try {
      renameSync(afterFile, this.cacheFile);
    } catch {
      rmSync(afterFile, { force: true });
    }
    rmSync(this.beforeFile, { force: true });
    if (this.ownCache) rmSync(this.cacheDir, { recursive: true, force: true });

    return {
      clean: settled.length === 0,
      roots: this.roots,
      excluded: [...this.excluded],
      changes: settled,
      others: [],
      gaps: this.gaps,
      manifest: this.counts,
      watcher: { ...this.watcher.status, missed },
      startedAt: this.startedAt,
      finishedAt: new Date().toISOString(),
    };
  }

  /** Gives up without a report (the run could not start): the watcher is stopped and temporary files go. */
  async abandon(): Promise<void> {
    await this.watcher.stop();
    rmSync(this.beforeFile, { force: true });
    if (this.ownCache) rmSync(this.cacheDir, { recursive: true, force: true });
  }

  private isExcluded(path: string): boolean {
    for (const excluded of this.excluded)
      if (path === excluded || path.startsWith(`${excluded}/`)) return true;
    return false;
  }
}

/** Temporary manifests left by a checker that was killed (its pid is in the name and no longer runs). */
function removeStale(cacheDir: string): void {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^[0-9a-f]{16}\.(\d+)\.[0-9a-f]{8}\.(before|after)$/.exec(name)?.[1];
    if (!pid || alive(Number(pid))) continue;
    rmSync(join(cacheDir, name), { force: true });
  }
}

/** Whether a process exists (EPERM: it does, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What an excluded path is, without looking inside it, or '' when there is none. With its ctime: a file system
 * may give a freed inode number to the next entry made (ext4 does), so a replaced entry can have the same one.
 */
function identity(path: string): string {
  try {
    const stats = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    return stats ? `${stats.dev}:${stats.ino}:${stats.mode & 0o170000n}:${stats.ctimeNs}` : '';
  } catch (error) {
    // Below a file or an unreadable directory: nothing there that could change a listing we compare.
    return (error as NodeJS.ErrnoException).code ?? 'EIO';
  }
}

/** The hash a previous manifest holds for an entry whose inode, size and times have not changed since. */
function cachedHash(cache: SortedLookup | undefined, entry: Entry, written: bigint): string | undefined {
  const old = cache?.find(entry.path);
  if (!old?.hash || !sameStat(old, entry)) return undefined;
  return BigInt(old.ctime) < written - racyNs ? old.hash : undefined;
}
