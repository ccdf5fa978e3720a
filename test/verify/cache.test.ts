import { existsSync, mkdirSync, readFileSync, realpathSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashCache, writeHashCache } from '../../src/verify/cache.js';
import { hashFile, type Rec, records } from '../../src/verify/manifest.js';
import { tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let base: string;
beforeEach(() => {
  dir = tempDir('replay-history-cache-');
  base = realpathSync(dir.path);
});
afterEach(() => dir.remove());

/** Two roots of files changed long before the cache is written (a cached hash is trusted after 2 s). */
function trees(): { roots: string[]; recs: Rec[] } {
  const roots = [join(base, 'r1'), join(base, 'r2')];
  const old = new Date(Date.now() - 60_000);
  for (const root of roots) {
    mkdirSync(join(root, 'sub'), { recursive: true });
    for (const name of ['a', 'b.txt', 'sub/c', 'sub/\u00e4']) {
      writeFileSync(join(root, name), `${root}/${name}`);
      utimesSync(join(root, name), old, old);
    }
  }
  const recs = [...records(roots, new Set())];
  for (const rec of recs) if (rec.type === 'file') rec.hash = hashFile(rec.path).hash;
  return { roots, recs };
}

describe('hash cache', () => {
  it('gives back each file’s hash, in walk order, under each root', async () => {
    const { roots, recs } = trees();
    const file = join(base, 'cache.hashes');
    writeHashCache(file, `${file}.tmp`, roots, recs);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    // Written now: read as if 3 s later, by moving the cache's own time forward.
    const later = new Date(Date.now() + 3000);
    utimesSync(file, later, later);
    for (const cache of [HashCache.read(file, roots), await HashCache.load(file, roots)]) {
      expect(cache?.size).toBe(recs.filter((rec) => rec.type === 'file').length);
      const found = recs.map((rec) => {
        if (rec.type !== 'file') return undefined;
        const root = rec.path.startsWith(`${roots[1]}/`) ? 1 : 0;
        return cache?.find(rec, root);
      });
      expect(found).toEqual(recs.map((rec) => rec.hash));
    }
    // Other roots: not this cache.
    expect(HashCache.read(file, [roots[0] as string])).toBeUndefined();
  });

  it('skips files it does not hold and files whose stat changed, and goes on with the rest', () => {
    const { roots, recs } = trees();
    const file = join(base, 'cache.hashes');
    const held = recs.filter((rec) => !rec.path.endsWith('/b.txt'));
    writeHashCache(file, `${file}.tmp`, roots, held);
    const later = new Date(Date.now() + 3000);
    utimesSync(file, later, later);
    const cache = HashCache.read(file, roots) as HashCache;
    const found = recs.map((rec) => {
      if (rec.type !== 'file') return undefined;
      const root = rec.path.startsWith(`${roots[1]}/`) ? 1 : 0;
      const asked = rec.path.endsWith('/sub/c') ? { ...rec, size: rec.size + 1 } : rec;
      return cache.find(asked, root);
    });
    expect(found).toEqual(
      recs.map((rec) => (rec.path.endsWith('/b.txt') || rec.path.endsWith('/sub/c') ? undefined : rec.hash)),
    );
  });

  it('writes nothing, keeping the cache it had, when a hash is not one', () => {
    const { roots, recs } = trees();
    const file = join(base, 'cache.hashes');
    writeHashCache(file, `${file}.tmp`, roots, recs);
    const before = readFileSync(file);
    const bad = recs.map((rec) => (rec.path.endsWith('/a') ? { ...rec, hash: 'not hex' } : rec));
    writeHashCache(file, `${file}.tmp`, roots, bad);
    expect(readFileSync(file)).toEqual(before);
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });
});
