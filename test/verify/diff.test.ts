import { describe, expect, it } from 'vitest';
import { type Change, compare, created, deleted, pairRenames, settle } from '../../src/verify/diff.js';
import { comparePaths, type Entry } from '../../src/verify/entry.js';
import { mergeSorted, SortedLookup } from '../../src/verify/manifest.js';

let inode = 1000;
/** An entry as a walk would record it; every call gets a fresh inode unless one is given. */
function entry(path: string, fields: Partial<Entry> = {}): Entry {
  return {
    path,
    type: 'file',
    mode: 0o644,
    uid: 1000,
    gid: 1000,
    size: 5,
    mtime: '1700000000000000000',
    ctime: '1700000000000000000',
    atime: '1700000000000000000',
    dev: '2049',
    ino: String(inode++),
    nlink: 1,
    hash: 'a'.repeat(64),
    ...fields,
  };
}

const dir = (path: string, fields: Partial<Entry> = {}) =>
  entry(path, { type: 'directory', size: 4096, hash: undefined, mode: 0o755, nlink: 2, ...fields });

/** The same entry after something happened to it: same inode unless changed. */
const changed = (before: Entry, fields: Partial<Entry>): Entry => ({ ...before, ...fields });

const later = '1700000005000000000';
const brief = (changes: Change[]) => changes.map((c) => [c.kind, c.path, ...(c.from ? [c.from] : [])]);

describe('comparePaths', () => {
  it("puts a directory right before its children, and 'a/b' before 'a-b' (unlike a plain sort)", () => {
    const paths = [
      '/r/a-b',
      '/r/a/b',
      '/r/a',
      '/r/a.b',
      '/r/a/b/c',
      '/r/a!',
      '/r/a0',
      '/r',
      '/r/a b',
      '/r/B',
    ];
    const sorted = [...paths].sort(comparePaths);
    expect(sorted).toEqual([
      '/r',
      '/r/B',
      '/r/a',
      '/r/a/b',
      '/r/a/b/c',
      '/r/a b',
      '/r/a!',
      '/r/a-b',
      '/r/a.b',
      '/r/a0',
    ]);
    // The order the merge needs is not the default string order: '-', '.', ' ' and '!' sort before '/' there.
    expect([...paths].sort()).not.toEqual(sorted);
    expect(comparePaths('a/b', 'a-b')).toBeLessThan(0);
    expect(comparePaths('a-b', 'a/b')).toBeGreaterThan(0);
    expect(comparePaths('a', 'a/b')).toBeLessThan(0);
    expect(comparePaths('a/b', 'a/b')).toBe(0);
  });

  it('keeps every subtree contiguous: nothing sorts between a directory and its last descendant', () => {
    const names = ['a', 'a-b', 'a.b', 'a b', 'ab', 'a!', '\u00e4', 'a\u{1F600}', 'A', '0'];
    const paths: string[] = [];
    for (const x of names) {
      paths.push(x);
      for (const y of names) {
        paths.push(`${x}/${y}`);
        for (const z of names.slice(0, 3)) paths.push(`${x}/${y}/${z}`);
      }
    }
    const sorted = paths.sort(comparePaths);
    for (const [i, path] of sorted.entries()) {
      const below = sorted.filter((p) => p.startsWith(`${path}/`));
      expect(sorted.slice(i + 1, i + 1 + below.length)).toEqual(below);
    }
  });
});

describe('mergeSorted and SortedLookup', () => {
  it('pairs paths of two sorted streams, one side missing for new and gone ones', () => {
    const before = ['/r', '/r/a', '/r/a/x', '/r/a-b'].map((p) => entry(p));
    const now = ['/r', '/r/a', '/r/a/y', '/r/a-b', '/r/z'].map((p) => entry(p));
    const pairs = [...mergeSorted(before, now)].map(([b, a]) => [b?.path, a?.path]);
    expect(pairs).toEqual([
      ['/r', '/r'],
      ['/r/a', '/r/a'],
      ['/r/a/x', undefined],
      [undefined, '/r/a/y'],
      ['/r/a-b', '/r/a-b'],
      [undefined, '/r/z'],
    ]);
  });

  it('finds entries asked for in ascending order and nothing for absent ones', () => {
    const lookup = new SortedLookup(['/r', '/r/a', '/r/a/b', '/r/a-b'].map((p) => entry(p)));
    expect(lookup.find('/r')?.path).toBe('/r');
    expect(lookup.find('/r/a/a')).toBeUndefined();
    expect(lookup.find('/r/a/b')?.path).toBe('/r/a/b');
    expect(lookup.find('/r/a-b')?.path).toBe('/r/a-b');
    expect(lookup.find('/r/zz')).toBeUndefined();
  });
});

describe('compare', () => {
  it('reports nothing for an identical entry, or one whose atime alone moved', () => {
    const file = entry('/r/f');
    expect(compare(file, { ...file })).toBeUndefined();
    expect(compare(file, changed(file, { atime: later }))).toBeUndefined();
  });

  it('takes ctime moving with atime (touch -a) as an access, but not ctime alone (an xattr)', () => {
    const file = entry('/r/f');
    expect(compare(file, changed(file, { atime: later, ctime: later }))).toBeUndefined();
    const xattr = compare(file, changed(file, { ctime: later }));
    expect(xattr).toMatchObject({ kind: 'modified', fields: ['ctime'] });
    expect(xattr?.detail).toBe('content identical; ctime changed');
    // Read earlier (atime moved, but is behind the new ctime), then an xattr set: still reported.
    const readThenXattr = compare(
      file,
      changed(file, { atime: '1700000002000000000', ctime: '1700000003000000000' }),
    );
    expect(readThenXattr).toMatchObject({ kind: 'modified', fields: ['ctime'] });
  });

  it('reports a content change by hash even when size and mtime are the same', () => {
    const file = entry('/r/f');
    const change = compare(file, changed(file, { hash: 'b'.repeat(64), ctime: later }));
    expect(change).toMatchObject({ kind: 'modified', path: '/r/f', fields: ['content', 'ctime'] });
    expect(change?.detail).toBe('content differs (5 → 5 bytes)');
  });

  it('reports mode alone as mode changed, and mode with content as modified', () => {
    const file = entry('/r/f');
    expect(compare(file, changed(file, { mode: 0o755, ctime: later }))).toMatchObject({
      kind: 'mode changed',
      detail: '0644 → 0755',
      fields: ['mode', 'ctime'],
    });
    const both = compare(file, changed(file, { mode: 0o755, hash: 'c'.repeat(64), ctime: later }));
    expect(both?.kind).toBe('modified');
    expect(both?.fields).toEqual(['content', 'mode', 'ctime']);
    expect(both?.detail).toBe('content differs (5 → 5 bytes), mode 0644 → 0755');
  });

  it('reports a type change and a link retarget', () => {
    const file = entry('/r/x');
    expect(compare(file, dir('/r/x'))).toMatchObject({
      kind: 'type changed',
      type: 'directory',
      detail: 'file → directory',
    });
    const link = entry('/r/l', { type: 'symlink', hash: undefined, target: 'a' });
    expect(compare(link, changed(link, { target: 'b', ino: '1', ctime: later }))).toMatchObject({
      kind: 'link retargeted',
      detail: 'a → b',
    });
  });

  it('falls back to size, mtime and inode when content could not be read', () => {
    const file = entry('/r/f', { hash: undefined, unreadable: 'EACCES' });
    const change = compare(file, changed(file, { mtime: later, ctime: later }));
    expect(change?.kind).toBe('modified');
    expect(change?.fields).toContain('content');
    expect(change?.detail).toBe('content not compared (unreadable); metadata differs');
  });
});

describe('pairRenames', () => {
  it('pairs a gone and a new path holding the same inode, size and mtime', () => {
    const old = entry('/r/a');
    const moved = changed(old, { path: '/r/b', ctime: later });
    const changes = pairRenames([old], [moved]);
    expect(changes).toEqual([
      {
        kind: 'renamed',
        path: '/r/b',
        from: '/r/a',
        type: 'file',
        fields: [],
        detail: 'from /r/a',
        layers: ['manifest'],
      },
    ]);
  });

  it('does not take a new file that reuses a freed inode for a rename', () => {
    const old = entry('/r/a');
    const reused = changed(old, { path: '/r/b', size: 9, mtime: later, hash: 'd'.repeat(64) });
    expect(brief(pairRenames([old], [reused]))).toEqual([
      ['created', '/r/b'],
      ['deleted', '/r/a'],
    ]);
  });

  it('pairs by content when the mtime moved but the content is the same, and says what else changed', () => {
    const old = entry('/r/a');
    const moved = changed(old, { path: '/r/b', mtime: later, mode: 0o600 });
    const [change] = pairRenames([old], [moved]);
    expect(change).toMatchObject({ kind: 'renamed', from: '/r/a', fields: ['mode', 'mtime'] });
    expect(change?.detail).toBe('from /r/a; mode, mtime changed too');
  });

  it('ignores the mtime and size a directory rename rewrites', () => {
    const old = dir('/r/d');
    const moved = changed(old, { path: '/r/e', mtime: later, ctime: later, size: 8192 });
    expect(pairRenames([old], [moved])).toMatchObject([{ kind: 'renamed', fields: [] }]);
  });

  it('never pairs across devices or types', () => {
    const old = entry('/r/a');
    const otherDevice = changed(old, { path: '/r/b', dev: '9' });
    const otherType = dir('/r/c', { ino: old.ino });
    expect(brief(pairRenames([old], [otherDevice, otherType]))).toEqual([
      ['created', '/r/b'],
      ['created', '/r/c'],
      ['deleted', '/r/a'],
    ]);
  });
});

describe('settle', () => {
  const renamed = (from: string, path: string, type: Entry['type'] = 'file', fields: string[] = []) =>
    ({ kind: 'renamed', path, from, type, fields, layers: ['manifest'] }) as Change;
  const dirModified = (path: string, fields = ['mtime', 'ctime']) =>
    ({ kind: 'modified', path, type: 'directory', fields, layers: ['manifest'] }) as Change;

  it('leaves a renamed directory as one change, its unchanged entries implied', () => {
    const changes = [
      renamed('/r/d/f', '/r/e/f'),
      renamed('/r/d/sub', '/r/e/sub', 'directory'),
      renamed('/r/d/sub/g', '/r/e/sub/g'),
      renamed('/r/d', '/r/e', 'directory'),
      dirModified('/r'),
    ];
    expect(brief(settle(changes))).toEqual([['renamed', '/r/e', '/r/d']]);
  });

  it('keeps an entry that changed as well as moved with its directory, and one renamed within it', () => {
    const changes = [
      renamed('/r/d', '/r/e', 'directory'),
      renamed('/r/d/f', '/r/e/f', 'file', ['mode']),
      renamed('/r/d/g', '/r/e/h'),
    ];
    expect(brief(settle(changes))).toEqual([
      ['renamed', '/r/e', '/r/d'],
      ['renamed', '/r/e/f', '/r/d/f'],
      ['renamed', '/r/e/h', '/r/d/g'],
    ]);
  });

  it('drops a directory whose bookkeeping changed for an entry that is reported, keeps it otherwise', () => {
    const file = created(entry('/r/d/new'));
    expect(brief(settle([dirModified('/r/d'), file]))).toEqual([['created', '/r/d/new']]);
    // Something made and removed in it, nothing else to show: the directory stays, so the run is not clean.
    expect(brief(settle([dirModified('/r/d')]))).toEqual([['modified', '/r/d']]);
    // A change of the directory's own metadata is not bookkeeping.
    expect(brief(settle([dirModified('/r/d', ['owner', 'ctime']), file]))).toEqual([
      ['modified', '/r/d'],
      ['created', '/r/d/new'],
    ]);
  });

  it('drops a bookkeeping change of a directory the caller explains (an excluded entry came or went)', () => {
    expect(settle([dirModified('/r/d')], new Set(['/r/d']))).toEqual([]);
    expect(brief(settle([dirModified('/r/d')], new Set(['/r/e'])))).toEqual([['modified', '/r/d']]);
    expect(brief(settle([dirModified('/r/d', ['owner', 'ctime'])], new Set(['/r/d'])))).toEqual([
      ['modified', '/r/d'],
    ]);
  });

  it('sorts the result in walk order', () => {
    const changes = [deleted(entry('/r/a-b')), created(entry('/r/a/b')), created(entry('/r/a'))];
    expect(settle(changes).map((c) => c.path)).toEqual(['/r/a', '/r/a/b', '/r/a-b']);
  });
});
