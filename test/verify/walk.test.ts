import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalRoots } from '../../src/verify/check.js';
import { comparePaths } from '../../src/verify/entry.js';
import type { Rec } from '../../src/verify/manifest.js';
import { hashFile, records, Walker, walk } from '../../src/verify/manifest.js';
import { byDirectory, WalkPool } from '../../src/verify/parallel.js';
import { tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let base: string;
beforeEach(() => {
  dir = tempDir('replay-history-walk-');
  base = realpathSync(dir.path);
});
afterEach(() => dir.remove());

/** Names that sort differently by plain string order and by path order. */
const names = ['a', 'a-b', 'a.b', 'a b', 'a!', 'a0', 'B', '\u00e4', 'a\u{1F600}'];

function tree(at: string, depth: number): void {
  mkdirSync(at, { recursive: true });
  for (const name of names) {
    const path = join(at, name);
    if (depth > 0 && (name === 'a' || name === 'a-b')) tree(path, depth - 1);
    else writeFileSync(path, name);
  }
}

const paths = (roots: string[], excluded: string[] = []) =>
  [...walk(roots, new Set(excluded))].map((e) => e.path);

describe('walk', () => {
  it('yields entries in comparePaths order: each directory right before its children', () => {
    const root = join(base, 'r');
    tree(root, 2);
    const walked = paths([root]);
    expect(walked).toEqual([...walked].sort(comparePaths));
    expect(walked).toHaveLength(new Set(walked).size);
    expect(walked.slice(0, 4)).toEqual([root, `${root}/B`, `${root}/a`, `${root}/a/B`]);
    // 'a/…' is done before 'a b', 'a!', 'a-b' begin (a plain sort would interleave them).
    const lastUnderA = walked.findLastIndex((p) => p.startsWith(`${root}/a/`));
    expect(walked[lastUnderA + 1]).toBe(`${root}/a b`);
    expect(walked.indexOf(`${root}/a-b`)).toBeGreaterThan(lastUnderA);
  });

  it('records type, mode, size and link target, and does not follow a symlink to a directory', () => {
    const root = join(base, 'r');
    mkdirSync(join(root, 'd'), { recursive: true });
    writeFileSync(join(root, 'd', 'f'), 'abc');
    symlinkSync('d', join(root, 'to-d'));
    const entries = [...walk([root], new Set())];
    expect(entries.map((e) => [e.path.slice(root.length), e.type])).toEqual([
      ['', 'directory'],
      ['/d', 'directory'],
      ['/d/f', 'file'],
      ['/to-d', 'symlink'],
    ]);
    expect(entries[2]).toMatchObject({ size: 3, nlink: 1 });
    expect(entries[3]?.target).toBe('d');
    expect(typeof entries[2]?.ino).toBe('string');
  });

  it('leaves out an excluded path with everything below it', () => {
    const root = join(base, 'r');
    tree(root, 1);
    const walked = paths([root], [`${root}/a`, `${root}/a.b`]);
    expect(walked).not.toContain(`${root}/a`);
    expect(walked.some((p) => p.startsWith(`${root}/a/`))).toBe(false);
    expect(walked).not.toContain(`${root}/a.b`);
    expect(walked).toContain(`${root}/a-b/a`);
  });

  it('walks several roots, given in any order, as one sorted stream', () => {
    const x = join(base, 'x');
    const xDash = join(base, 'x-y');
    tree(x, 1);
    tree(xDash, 0);
    const roots = canonicalRoots([xDash, x, join(x, 'a'), `${x}/`]);
    expect(roots).toEqual([x, xDash]);
    const walked = paths([xDash, x]);
    expect(walked).toEqual([...walked].sort(comparePaths));
    expect(walked[0]).toBe(x);
    expect(walked.indexOf(xDash)).toBe(walked.filter((p) => p === x || p.startsWith(`${x}/`)).length);
  });
});

describe('WalkPool', () => {
  it('walks on worker threads exactly as records does: order, stats, links, exclusions', async () => {
    const x = join(base, 'x');
    const xDash = join(base, 'x-y');
    tree(x, 2);
    tree(xDash, 1);
    symlinkSync('a', join(x, 'to-a'));
    symlinkSync('nowhere', join(xDash, 'dangling'));
    const excluded = new Set([`${x}/a-b`, `${xDash}/a.b`]);
    const pool = WalkPool.open(excluded, 2);
    expect(pool).toBeDefined();
    try {
      // Listing a directory the first time may set its access time (relatime), after its lstat: walked once first.
      [...records([x, xDash], excluded)];
      const single = [...records([x, xDash], excluded)];
      const pooled = await (pool as WalkPool).walk([xDash, x]);
      expect(pooled).toEqual(single);
      expect(pooled.some((rec) => rec.target === 'nowhere')).toBe(true);
      const files = pooled.filter((rec) => rec.type === 'file');
      const counted = await (pool as WalkPool).hash(files);
      expect(counted.hashed).toBe(files.length);
      for (const file of files) expect(file.hash).toBe(hashFile(file.path).hash);
    } finally {
      pool?.close();
    }
  });
});

describe('hashFile', () => {
  it('gives the sha256 of the content, or why it could not read it', () => {
    const file = join(base, 'f');
    const content = Buffer.alloc(3 * 1024 * 1024 + 7, 'z'); // more than one read chunk
    writeFileSync(file, content);
    expect(hashFile(file)).toEqual({ hash: createHash('sha256').update(content).digest('hex') });
    expect(hashFile(join(base, 'missing'))).toEqual({ error: 'ENOENT' });
  });

  it('hashes alike on this thread and the workers at every size around its read chunk (1 MiB)', async () => {
    const MiB = 1024 * 1024;
    const sizes = [0, 1, MiB - 1, MiB, MiB + 1, 2 * MiB, 2 * MiB + 3];
    const dir = join(base, 'sizes');
    mkdirSync(dir);
    const files = sizes.map((size, i) => {
      const path = join(dir, `f${i}`);
      // not one byte repeated: a read that went wrong would show
      const content = Buffer.alloc(size);
      for (let k = 0; k < size; k++) content[k] = (k * 31 + i) & 0xff;
      writeFileSync(path, content);
      return { path, hash: createHash('sha256').update(content).digest('hex') };
    });
    for (const file of files) expect(hashFile(file.path)).toEqual({ hash: file.hash });
    const pool = WalkPool.open(new Set(), 2) as WalkPool;
    try {
      const recs = (await pool.walk([dir])).filter((rec) => rec.type === 'file');
      await pool.hash(recs);
      expect(recs.map((rec) => [rec.path, rec.hash])).toEqual(files.map((file) => [file.path, file.hash]));
    } finally {
      pool.close();
    }
  });
});

describe('Walker', () => {
  it('stopped anywhere, gives a rest that the workers walk into exactly the rest of records', async () => {
    const x = join(base, 'x');
    const y = join(base, 'x-y');
    tree(x, 2);
    tree(y, 1);
    mkdirSync(join(x, 'empty'));
    symlinkSync('a', join(x, 'to-a'));
    writeFileSync(Buffer.concat([Buffer.from(`${y}/bad-`), Buffer.from([0xff])]), 'x');
    const excluded = new Set([`${x}/a-b`, `${y}/a.b`]);
    const roots = [y, x];
    [...records(roots, excluded)];
    const whole = [...records(roots, excluded)];
    expect(whole.some((rec) => rec.unreadable === 'EILSEQ')).toBe(true);
    const pool = WalkPool.open(excluded, 2) as WalkPool;
    expect(pool).toBeDefined();
    try {
      for (let cut = 0; cut <= whole.length; cut++) {
        const walker = new Walker(roots, excluded);
        const head: Rec[] = [];
        for (let n = 0; n < cut; n++) head.push(walker.next() as Rec);
        const rest = await pool.walkFrom(walker.rest());
        expect([...head, ...rest], `cut after ${cut}`).toEqual(whole);
        expect(walker.next()).toBeUndefined();
      }
    } finally {
      pool.close();
    }
  });
});

describe('WalkPool, walking again', () => {
  it('walks again from an earlier walk: the same entries, the unchanged ones the earlier objects', async () => {
    const x = join(base, 'x');
    tree(x, 2);
    symlinkSync('a', join(x, 'to-a'));
    const pool = WalkPool.open(new Set(), 2) as WalkPool;
    expect(pool).toBeDefined();
    try {
      // Read every file and list every directory once: a first read sets the access time (relatime).
      for (const rec of records([x], new Set())) if (rec.type === 'file') hashFile(rec.path);
      const directories = new Map<string, Rec[]>();
      const first = await pool.walk([x], { directories });
      // What the walk recorded by directory is what byDirectory makes of its entries, for a walk on this thread too.
      const byPath = (map: Map<string, Rec[]>) => [...map].map(([d, recs]) => [d, recs.map((r) => r.path)]);
      expect(byPath(directories)).toEqual(byPath(byDirectory(first)));
      expect(byPath(byDirectory([...records([x], new Set())]))).toEqual(byPath(directories));
      await pool.hash(first.filter((rec) => rec.type === 'file'));
      // A file left without a hash is never taken over: the checker would hash it and change the first walk's.
      const unhashed = first.find((rec) => rec.path === join(x, 'a-b', 'B')) as Rec;
      unhashed.hash = undefined;

      appendFileSync(join(x, 'a', 'a0'), 'more'); // content
      chmodSync(join(x, 'a.b'), 0o600); // mode
      renameSync(join(x, 'a-b', 'a0'), join(x, 'a-b', 'a1')); // same number of names, one different
      writeFileSync(join(x, 'a', 'a', 'new'), 'n'); // one name more
      rmSync(join(x, 'to-a'));
      symlinkSync('a-b', join(x, 'to-a')); // another target
      // Listing a changed directory sets its access time: once here, so that the two walks below find the same.
      [...records([x], new Set())];
      const again = await pool.walk([x], { previous: directories });
      const fresh = await pool.walk([x]);
      const bare = (recs: Rec[]) => recs.map(({ hash: _, ...rec }) => rec);
      expect(bare(again)).toEqual(bare(fresh));

      // Taken over exactly when every field of the entry is as it was (and a file has its hash), in a directory
      // holding as many names as it did.
      const earlier = new Map(first.map((rec) => [rec.path, rec]));
      const same = (a: Rec, b: Rec) => JSON.stringify(bare([a])) === JSON.stringify(bare([b]));
      const counts = (recs: Rec[]) => {
        const n = new Map<string, number>();
        for (const rec of recs) n.set(dirname(rec.path), (n.get(dirname(rec.path)) ?? 0) + 1);
        return n;
      };
      const [before, now] = [counts(first), counts(fresh)];
      const expected = fresh
        .filter((rec) => {
          const old = earlier.get(rec.path);
          const parent = dirname(rec.path);
          return (
            old &&
            same(old, rec) &&
            (old.type !== 'file' || old.hash !== undefined) &&
            (rec.path === x || before.get(parent) === now.get(parent))
          );
        })
        .map((rec) => rec.path);
      const taken = again.filter((rec) => earlier.get(rec.path) === rec).map((rec) => rec.path);
      expect(taken).toEqual(expected);
      expect(taken.length).toBeGreaterThan(fresh.length / 2);
      for (const changed of [
        'a/a0',
        'a.b',
        'a/a/B', // unchanged, in a directory with a name more
        'a-b/a1',
        'a/a/new',
        'to-a',
        'a-b/B',
        // Their directories' own times changed.
        'a/a',
        'a-b',
      ])
        expect(taken).not.toContain(join(x, changed));
      expect(taken).toContain(join(x, 'a', 'B'));

      // An earlier entry that differs in any one field, or has another name, is never taken.
      const link = join(x, 'to-a');
      const altered: [string, Partial<Rec>][] = [
        ['path', { path: join(x, 'C') }],
        ['type', { type: 'fifo' }],
        ...(['mode', 'uid', 'gid', 'size', 'nlink', 'mtimeS', 'mtimeN', 'ctimeS', 'ctimeN'] as const).map(
          (field): [string, Partial<Rec>] => [field, { [field]: 12345 }],
        ),
        ...(['atimeS', 'atimeN', 'dev', 'ino'] as const).map((field): [string, Partial<Rec>] => [
          field,
          { [field]: 12345 },
        ]),
        ['unreadable', { unreadable: 'EIO' }],
      ];
      // Whether a walk given an earlier entry for `path` altered by `change` takes that entry over.
      const takes = async (path: string, change: Partial<Rec>) => {
        const parent = dirname(path);
        // The entry as it is now (a file with a hash), then altered.
        const now = fresh.find((rec) => rec.path === path) as Rec;
        const copy = { ...now, ...(now.type === 'file' ? { hash: 'h' } : {}), ...change };
        const previous = new Map(directories);
        previous.set(
          parent,
          (directories.get(parent) as Rec[]).map((rec) => (rec.path === path ? copy : rec)),
        );
        const recs = await pool.walk([x], { previous });
        expect(bare(recs)).toEqual(bare(fresh));
        return recs.includes(copy);
      };
      expect(await takes(join(x, 'B'), {})).toBe(true);
      for (const [field, change] of altered) expect(await takes(join(x, 'B'), change), field).toBe(false);
      expect(await takes(link, {})).toBe(true);
      expect(await takes(link, { target: 'elsewhere' })).toBe(false);
    } finally {
      pool.close();
    }
  });
});
