// The hash cache kept between runs: for each regular file hashed under the roots, its inode, size, times and
// sha256, so that the next run reads only the files whose stat changed. Its only use is that look-up, so it holds
// files alone, in walk order, in a form read without parsing: a JSON header line, then (from the next multiple of
// 8 bytes) the numbers of every file as doubles, their hashes as 32 raw bytes each, and their paths relative to
// their root as UTF-8, each ended by a NUL.
//
//   {"format":"replay-history.hash-cache/v2","roots":["/abs/root", …],"files":N,"pathBytes":P}\n
//   N × 8 doubles: root index, size, mtime s, mtime ns, ctime s, ctime ns, ino, dev
//   N × 32 bytes: sha256
//   P bytes: "relative/path\0" × N
//
// A file that is not exactly this (an older cache held one JSON object per entry, with absolute paths and every
// field), is for other roots, or is cut short is not used: every file is hashed, as with no cache.
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { comparePaths } from './entry.js';
import type { Rec } from './manifest.js';

export const cacheFormat = 'replay-history.hash-cache/v2';

/** A cached hash is not trusted for a file changed within this many seconds of the cache being written (racy-git). */
const racySeconds = 2;
/** Doubles per file. */
const F = 8;

const align8 = (n: number) => Math.ceil(n / 8) * 8;

export class HashCache {
  /** The next file to look at: look-ups come in walk order, as the files were written. */
  private cursor = 0;

  private constructor(
    private readonly roots: readonly string[],
    private readonly numbers: Float64Array,
    /** Every file's sha256 in hex, one after the other. */
    private readonly hex: string,
    private readonly paths: string[],
    /** When the cache was written (its mtime), in seconds and nanoseconds. */
    private readonly writtenS: number,
    private readonly writtenN: number,
  ) {}

  /** The number of files it holds. */
  get size(): number {
    return this.paths.length;
  }

  /** The cache in `file` for exactly these roots, or undefined (none, another format, other roots, damaged). */
  static read(file: string, roots: readonly string[]): HashCache | undefined {
    try {
      const written = statSync(file, { bigint: true }).mtimeNs;
      return HashCache.parse(readFileSync(file), written, roots);
    } catch {
      return undefined;
    }
  }

  /** `read` with the file read off this thread, so that a walk already under way goes on meanwhile. */
  static async load(file: string, roots: readonly string[]): Promise<HashCache | undefined> {
    try {
      const written = (await stat(file, { bigint: true })).mtimeNs;
      return HashCache.parse(await readFile(file), written, roots);
    } catch {
      return undefined;
    }
  }

  private static parse(bytes: Buffer, written: bigint, roots: readonly string[]): HashCache | undefined {
    try {
      const headerEnd = bytes.indexOf(10);
      if (headerEnd < 0 || headerEnd > 1 << 20) return undefined;
      const header = JSON.parse(bytes.toString('utf8', 0, headerEnd)) as {
        format?: unknown;
        roots?: unknown;
        files?: unknown;
        pathBytes?: unknown;
      };
      const { files, pathBytes } = header;
      if (
        header.format !== cacheFormat ||
        JSON.stringify(header.roots) !== JSON.stringify(roots) ||
        !Number.isSafeInteger(files) ||
        !Number.isSafeInteger(pathBytes)
      )
        return undefined;
      const n = files as number;
      const numbersAt = align8(headerEnd + 1);
      const hashesAt = numbersAt + n * F * 8;
      const pathsAt = hashesAt + n * 32;
      if (bytes.length !== pathsAt + (pathBytes as number)) return undefined;
      // A view when the bytes are aligned for doubles (a file this size has a buffer of its own), else a copy.
      const numbers =
        (bytes.byteOffset + numbersAt) % 8 === 0
          ? new Float64Array(bytes.buffer, bytes.byteOffset + numbersAt, n * F)
          : new Float64Array(bytes.buffer.slice(bytes.byteOffset + numbersAt, bytes.byteOffset + hashesAt));
      const paths = bytes.toString('utf8', pathsAt).split('\0');
      if (paths.pop() !== '' || paths.length !== n) return undefined;
      for (let i = 0; i < n; i++) if (!((numbers[i * F] as number) < roots.length)) return undefined;
      // Every hash in hex at once, here (where a walk may be under way) rather than at the first look-up.
      const hex = bytes.toString('hex', hashesAt, pathsAt);
      return new HashCache(
        roots,
        numbers,
        hex,
        paths,
        Number(written / 1_000_000_000n),
        Number(written % 1_000_000_000n),
      );
    } catch {
      return undefined;
    }
  }

  /**
   * The hash it holds for a regular file whose inode, size and times are the same, unless that is racy. Files
   * must be asked for in walk order (`root` is the index of the root the file is under).
   */
  find(rec: Rec, root: number): string | undefined {
    const base = this.roots[root] as string;
    const rel = rec.path === base ? '' : rec.path.slice(base === '/' ? 1 : base.length + 1);
    const { numbers, paths } = this;
    let i = this.cursor;
    // A tree that did not change since the cache was written is asked for exactly the files it holds, in order:
    // the file at the cursor is the one asked for, and is taken without ordering the two paths.
    if (!(i < paths.length && paths[i] === rel && numbers[i * F] === root)) {
      while (
        i < paths.length &&
        ((numbers[i * F] as number) < root ||
          ((numbers[i * F] as number) === root && comparePaths(paths[i] as string, rel) < 0))
      )
        i++;
      if (i >= paths.length || numbers[i * F] !== root || paths[i] !== rel) {
        this.cursor = i;
        return undefined;
      }
    }
    this.cursor = i + 1;
    const o = i * F;
    if (
      numbers[o + 1] !== rec.size ||
      numbers[o + 2] !== rec.mtimeS ||
      numbers[o + 3] !== rec.mtimeN ||
      numbers[o + 4] !== rec.ctimeS ||
      numbers[o + 5] !== rec.ctimeN ||
      numbers[o + 6] !== rec.ino ||
      numbers[o + 7] !== rec.dev
    )
      return undefined;
    const limit = this.writtenS - racySeconds;
    const settled = rec.ctimeS < limit || (rec.ctimeS === limit && rec.ctimeN < this.writtenN);
    // A slice of one hex string costs far less than a conversion per file.
    return settled ? this.hex.slice(i * 64, i * 64 + 64) : undefined;
  }
}

/** The index of the root each of `recs` (sorted, as a walk gives them) is under. */
export function* rootIndexes(roots: readonly string[], recs: readonly Rec[]): Generator<[Rec, number]> {
  let r = 0;
  for (const rec of recs) {
    // Sorted recs of non-nested roots: all of one root come before the next root's.
    while (r < roots.length - 1 && !under(rec.path, roots[r] as string)) r++;
    yield [rec, r];
  }
}

/**
 * Writes the hashes of the regular files among `recs` (sorted, under `roots`, as a walk gives them) to `file`,
 * through a temporary file renamed over it, so a reader never sees half a cache. Any failure leaves no file
 * behind but the old cache (the next run hashes more, nothing else). A file whose inode or device number is
 * beyond 2^53 is left out (hashed again next time).
 */
export function writeHashCache(
  file: string,
  temporary: string,
  roots: readonly string[],
  recs: readonly Rec[],
): void {
  const kept: Rec[] = [];
  const under: number[] = [];
  for (const [rec, r] of rootIndexes(roots, recs))
    if (
      rec.type === 'file' &&
      rec.hash !== undefined &&
      typeof rec.ino === 'number' &&
      typeof rec.dev === 'number'
    ) {
      kept.push(rec);
      under.push(r);
    }
  const n = kept.length;
  const numbers = new Float64Array(n * F);
  const hexes: string[] = new Array(n);
  const rels: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const rec = kept[i] as Rec;
    const r = under[i] as number;
    const root = roots[r] as string;
    rels[i] = rec.path === root ? '' : rec.path.slice(root === '/' ? 1 : root.length + 1);
    const o = i * F;
    numbers[o] = r;
    numbers[o + 1] = rec.size;
    numbers[o + 2] = rec.mtimeS;
    numbers[o + 3] = rec.mtimeN;
    numbers[o + 4] = rec.ctimeS;
    numbers[o + 5] = rec.ctimeN;
    numbers[o + 6] = rec.ino as number;
    numbers[o + 7] = rec.dev as number;
    hexes[i] = rec.hash as string;
  }
  // One conversion of all the hashes, not one per file.
  const hashes = Buffer.from(hexes.join(''), 'hex');
  if (hashes.length !== n * 32) return; // a hash that is not 64 hex digits: no cache rather than a wrong one
  const paths = Buffer.from(n === 0 ? '' : `${rels.join('\0')}\0`, 'utf8');
  const header = Buffer.from(
    `${JSON.stringify({ format: cacheFormat, roots, files: n, pathBytes: paths.length })}\n`,
    'utf8',
  );
  const padding = Buffer.alloc(align8(header.length) - header.length);
  let fd: number | undefined;
  try {
    fd = openSync(temporary, 'w', 0o600);
    for (const part of [header, padding, Buffer.from(numbers.buffer), hashes, paths])
      for (let at = 0; at < part.length; ) at += writeSync(fd, part, at);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, file);
  } catch {
    if (fd !== undefined) closeSync(fd);
    rmSync(temporary, { force: true });
  }
}

function under(path: string, root: string): boolean {
  return path === root || root === '/' || path.startsWith(`${root}/`);
}
