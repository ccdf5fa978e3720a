import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  constants,
  fstatSync,
  lstatSync,
  readlinkSync,
  realpathSync,
  rmSync,
  type Stats,
  statSync,
} from 'node:fs';
import { type FileHandle, open, rename } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { leftByGone } from '../processes.js';

/**
 * Bytes a file's stream takes before a row waits for them to be written: rows of a session export are ~50 KB,
 * and with the default 16 KB every row waited for a write of its own.
 */
const ROWS_BUFFERED = 1 << 20;

/** What is at an `--out` path, which decides how it is written. */
export type TargetKind = 'new' | 'file' | 'link' | 'character device' | 'block device' | 'fifo' | 'socket';

/**
 * Where the rows of one output go. A regular file, a path that does not exist yet, or a symbolic link whose final
 * target is one of those, is written `atomic`ally: under a temporary name beside `writesTo` (the link's target,
 * so the link stays a link), renamed onto it when complete — a killed or failed export leaves no half dataset
 * under the real name. Anything else (a device, a FIFO, a socket, `/dev/stdout`) is written in place: renaming a
 * file over it would replace the device node or the pipe with a plain file and its reader would never see a row.
 */
export interface Target {
  /** The path as given. */
  path: string;
  kind: TargetKind;
  /** The file the rows end up in: `path`, or the final target of a link. */
  writesTo: string;
  atomic: boolean;
  /** Reached through a `/proc/…/fd` link (`/dev/stdout`, `/dev/fd/N`): an open descriptor, not a name. */
  descriptor: boolean;
}

/** A write that failed, said plainly: the path as given, the cause in words, and what is left there. */
export class SinkError extends Error {
  constructor(
    readonly path: string,
    readonly code: string | undefined,
    cause: string,
    readonly hint: string,
  ) {
    super(`cannot write ${path}: ${cause}${code ? ` (${code})` : ''}`);
    this.name = 'SinkError';
  }
}

const causes: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EPIPE: 'its reader went away before every row was written',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENXIO: 'no device answers there',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EIO: 'input/output error',
};

/** An error's cause in words (the errno code kept beside it by SinkError), for any write to a file or stream. */
export function causeOf(error: unknown): { code: string | undefined; cause: string } {
  const code = (error as NodeJS.ErrnoException).code;
  return { code, cause: (code && causes[code]) ?? (error as Error).message };
}

/** `written`: rows may have reached an in-place target before the error (a write failed, not the open). */
function failure(
  target: Pick<Target, 'path' | 'atomic'> & { kind?: TargetKind },
  error: unknown,
  written = false,
): SinkError {
  if (error instanceof SinkError) return error;
  const described = causeOf(error);
  const { code } = described;
  let { cause } = described;
  if (code === 'ENOENT') cause = target.atomic ? 'its directory does not exist' : 'it does not exist';
  if (code === 'ENXIO' && target.kind === 'socket')
    cause = 'it is a socket, which cannot be opened as a file';
  const hint = target.atomic
    ? 'nothing was written under that name'
    : written
      ? 'it was written in place: what reached it before the error is all it got'
      : 'nothing was written to it';
  return new SinkError(target.path, code, cause, hint);
}

function kindOf(stats: Stats): TargetKind | 'directory' {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'link';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isFIFO()) return 'fifo';
  return 'socket';
}

function lstatOrMissing(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

const isDirectory = (path: string): SinkError =>
  failure({ path, atomic: true }, Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));

/** Linux allows 40 links in a path; a longer chain is a loop. */
const maxLinks = 40;

/** What `path` is and how to write it; nothing is opened or created. */
export function targetOf(path: string): Target {
  const plain = (kind: TargetKind, writesTo: string): Target => ({
    path,
    kind,
    writesTo,
    atomic: kind === 'new' || kind === 'file',
    descriptor: false,
  });
  try {
    const stats = lstatOrMissing(path);
    if (!stats) return plain('new', path);
    const kind = kindOf(stats);
    if (kind === 'directory') throw isDirectory(path);
    if (kind !== 'link') return plain(kind, path);
    // Follow the chain one link at a time, to find the file to put the temporary beside.
    let current = path;
    for (let hop = 0; hop < maxLinks; hop++) {
      const directory = realpathSync(dirname(current));
      if (directory.startsWith('/proc/')) {
        // `/dev/stdout` → `/proc/self/fd/1` → `pipe:[123]`: a descriptor's "target" is no path to create or
        // rename onto. The kernel follows it on open, to the pipe, terminal or file the descriptor holds.
        const opened = kindOf(statSync(path));
        if (opened === 'directory') throw isDirectory(path);
        return { path, kind: opened, writesTo: path, atomic: false, descriptor: true };
      }
      const next = resolve(directory, readlinkSync(current));
      const reached = lstatOrMissing(next);
      // A dangling link: writing through it creates its target, as a shell's `>` would.
      if (!reached) return { ...plain('link', next), atomic: true };
      const kind = kindOf(reached);
      if (kind === 'directory') throw isDirectory(path);
      if (kind === 'file') return { ...plain('link', next), atomic: true };
      if (kind !== 'link') return plain(kind, next);
      current = next;
    }
    throw Object.assign(new Error('ELOOP'), { code: 'ELOOP' });
  } catch (error) {
    throw failure({ path, atomic: true }, error);
  }
}

/** What a target is, in a word or two: 'FIFO', 'pipe' (a FIFO reached through a descriptor), 'character device'… */
export function kindName(target: Target): string {
  if (target.kind === 'fifo') return target.descriptor ? 'pipe' : 'FIFO';
  return target.kind;
}

/**
 * Whether an in-place target is the very file our stdout is (`--out /dev/stdout`, or the pipe stdout goes to):
 * then nothing else may be written to stdout between its rows, and a reader that left ends the export as it does
 * for stdout.
 */
export function sharesStdout(target: Target | undefined): boolean {
  if (!target || target.atomic) return false;
  try {
    const ours = fstatSync(1);
    const theirs = statSync(target.path);
    return ours.dev === theirs.dev && ours.ino === theirs.ino;
  } catch {
    return false;
  }
}

/**
 * Where rows go: a file or device (see Target), or stdout. Opened before the first row, so a path that cannot be
 * written fails before any work and an export of zero rows still leaves its (empty) file. Writes wait for the
 * stream to drain, so memory stays flat however fast rows are made and however slow the reader is.
 */
export class Sink {
  rows = 0;
  bytes = 0;
  /** A write failed (a full disk, a reader gone): every later write throws it. */
  private failure: SinkError | undefined;

  private constructor(
    /** Undefined for stdout. */
    readonly target: Target | undefined,
    private readonly stream: Writable,
    private readonly temporary?: string,
  ) {
    this.stream.on('error', (error: Error) => {
      this.failure ??= failure(target ?? { path: 'stdout', atomic: false }, error, true);
    });
  }

  /** The given path (undefined: stdout). */
  get file(): string | undefined {
    return this.target?.path;
  }

  /** Opens `file` as its kind asks (a FIFO's open waits for a reader), or stdout when there is none. */
  static async open(file: string | undefined): Promise<Sink> {
    if (file === undefined) return new Sink(undefined, process.stdout);
    const target = targetOf(file);
    if (!target.atomic) {
      // A socket cannot be opened by name (ENXIO): `--out /dev/stdout` with stdout a socket, as a Node or Python
      // parent spawns us, writes to the descriptor itself.
      if (target.kind === 'socket' && sharesStdout(target)) return new Sink(target, process.stdout);
      // No O_CREAT: a device that vanished meanwhile must not come back as a regular file. No O_TRUNC: devices
      // and pipes have nothing to cut, and a file behind `/dev/stdout` (`>> log`) is appended to, never emptied.
      const append = target.kind === 'file' ? constants.O_APPEND : 0;
      let handle: FileHandle;
      try {
        handle = await open(file, constants.O_WRONLY | append);
      } catch (error) {
        throw failure(target, error);
      }
      return new Sink(target, handle.createWriteStream());
    }
    removeStale(target.writesTo);
    const temporary = `${target.writesTo}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    let handle: FileHandle;
    try {
      // O_EXCL: never write through something that appeared under the temporary name.
      handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
    } catch (error) {
      throw failure(target, error);
    }
    temporaries.add(temporary);
    try {
      if (target.kind !== 'new') await keepOwnership(handle, target.writesTo);
    } catch (error) {
      await handle.close();
      rmSync(temporary, { force: true });
      temporaries.delete(temporary);
      throw failure(target, error);
    }
    return new Sink(target, handle.createWriteStream({ highWaterMark: ROWS_BUFFERED }), temporary);
  }

  /** One row, as a line. */
  async write(row: string): Promise<void> {
    this.rows++;
    // Encoded once, the line feed put after it in the same buffer: `${row}\n` would be a rope, copied whole
    // (flattened) to be measured and again to be encoded.
    const size = Buffer.byteLength(row);
    const line = Buffer.allocUnsafe(size + 1);
    line.write(row, 0, size, 'utf8');
    line[size] = 0x0a;
    await this.bytesOut(line);
  }

  /** Text as it is (a whole companion file). */
  async text(text: string): Promise<void> {
    await this.bytesOut(Buffer.from(text));
  }

  private async bytesOut(bytes: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    this.bytes += bytes.length;
    if (!this.stream.write(bytes)) {
      try {
        await once(this.stream, 'drain');
      } catch {
        // The error listener has turned it into this.failure.
      }
      if (this.failure) throw this.failure;
    }
  }

  /** Flushes and closes; an atomic target is then renamed into place. */
  async close(): Promise<void> {
    if (this.stream === process.stdout) return;
    if (this.failure) throw this.failure;
    this.stream.end();
    // Settles once the descriptor is closed (a file stream emits 'close'), so an error from close() counts too;
    // a rejection is already this.failure.
    await finished(this.stream).catch(() => undefined);
    if (this.failure) throw this.failure;
    if (!this.temporary || !this.target) return;
    try {
      await rename(this.temporary, this.target.writesTo);
      temporaries.delete(this.temporary);
    } catch (error) {
      this.abandon();
      throw failure(this.target, error);
    }
  }

  /** Gives up: the temporary file goes, the real name is left as it was. */
  abandon(): void {
    if (this.stream === process.stdout) return;
    this.stream.destroy();
    if (this.temporary) {
      rmSync(this.temporary, { force: true });
      temporaries.delete(this.temporary);
    }
  }
}

/** The temporary files of the sinks open now: what a stop by a signal removes (`removeTemporaries`). */
const temporaries = new Set<string>();

/**
 * Removes every sink's temporary file at once, for a process stopped by a signal (Ctrl-C, `kill`): the real
 * names keep what they held. Returns the targets that were being written.
 */
export function removeTemporaries(): string[] {
  const targets: string[] = [];
  for (const temporary of temporaries) {
    rmSync(temporary, { force: true });
    targets.push(temporary.replace(/\.\d+-[0-9a-f]{8}\.tmp$/, ''));
  }
  temporaries.clear();
  return targets;
}

/** A temporary file untouched this long, of a process no longer running here, is one a killed writer left. */
const STALE_MS = 10 * 60 * 1000;

/**
 * Removes what writers of `file` killed without a word (SIGKILL, a crash) left beside it: `FILE.<pid>-<hex>.tmp`
 * whose process is gone and which has not changed for ten minutes (a writer on another machine sharing the
 * folder keeps its file changing). Nothing else is touched; a file that cannot be looked at is left.
 */
function removeStale(file: string): void {
  const folder = dirname(file);
  const own = basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const name of leftByGone(folder, new RegExp(`^${own}\\.(\\d+)-[0-9a-f]{8}\\.tmp$`))) {
    const path = join(folder, name);
    try {
      const stats = lstatSync(path);
      if (stats.isFile() && Date.now() - stats.mtimeMs > STALE_MS) rmSync(path, { force: true });
    } catch {
      // Gone meanwhile, or not ours to look at.
    }
  }
}

/**
 * The replacement keeps the replaced file's permissions (a dataset made private stays private) and, where we may
 * (root writing a user's file), its owner.
 */
async function keepOwnership(handle: FileHandle, replaced: string): Promise<void> {
  const stats = statSync(replaced, { throwIfNoEntry: false });
  if (!stats) return;
  await handle.chmod(stats.mode & 0o777);
  if (stats.uid !== process.getuid?.() || stats.gid !== process.getgid?.())
    await handle.chown(stats.uid, stats.gid).catch(() => undefined);
}

/** A whole small file (a companion), with the same care for what is at its path as the rows get. */
export async function writeWhole(file: string, content: string): Promise<void> {
  const sink = await Sink.open(file);
  try {
    await sink.text(content);
    await sink.close();
  } catch (error) {
    sink.abandon();
    throw error;
  }
}
