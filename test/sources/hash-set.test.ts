// The packed hash sets a continued read keeps (src/sources/hash-set.ts): never "no" for an id it holds, the same
// packing whatever the order or repeats of the ids (a continued read's state must equal a full read's).

import { describe, expect, it } from 'vitest';
import { HashSet } from '../../src/sources/hash-set.js';

const ids = (n: number, prefix = 'id') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('HashSet', () => {
  it('says it may have every id added, before and after packing and unpacking', () => {
    const set = HashSet.of(ids(1000));
    for (const id of ids(1000)) expect(set.mayHave(id)).toBe(true);
    const again = new HashSet(set.pack());
    for (const id of ids(1000)) expect(again.mayHave(id)).toBe(true);
    again.add('late');
    expect(again.mayHave('late')).toBe(true);
    expect(new HashSet(again.pack()).mayHave('late')).toBe(true);
  });

  it('says no for ids it never held', () => {
    const set = HashSet.of(['a', 'b', 'c']);
    expect(set.mayHave('d')).toBe(false);
    expect(new HashSet(set.pack()).mayHave('d')).toBe(false);
    expect(new HashSet().mayHave('a')).toBe(false);
  });

  it('packs the same ids alike, in any order and however often each was added', () => {
    const forward = HashSet.of(ids(500)).pack();
    const backward = HashSet.of(ids(500).reverse()).pack();
    const twice = new HashSet(HashSet.of(ids(250)).pack());
    for (const id of ids(500)) twice.add(id);
    expect(backward).toBe(forward);
    expect(twice.pack()).toBe(forward);
  });
});
