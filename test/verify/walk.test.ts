import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalRoots } from '../../src/verify/check.js';
import { comparePaths } from '../../src/verify/entry.js';
import { hashFile, records, walk } from '../../src/verify/manifest.js';
import { WalkPool } from '../../src/verify/parallel.js';
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
});
