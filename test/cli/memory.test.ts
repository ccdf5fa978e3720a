// A replay collects garbage only when V8 holds more than a limit (its heap in use plus the buffers JS owns):
// bounded memory however long the run, nothing paid while V8 keeps under it on its own.
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectOver } from '../../src/cli/memory.js';

const held = () => {
  const heap = getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
};

describe('collectOver', () => {
  it('collects when what V8 holds is over the limit, and not under it', () => {
    let collected = 0;
    const collect = () => collected++;
    expect(collectOver(held() + 512 * 1024 * 1024, collect)()).toBe(false);
    expect(collected).toBe(0);
    expect(collectOver(0, collect)()).toBe(true);
    expect(collected).toBe(1);
  });

  it('counts buffers outside the heap: 64 MiB of them put it over a limit 32 MiB above the heap', () => {
    let collected = 0;
    const limit = held() + 32 * 1024 * 1024;
    const check = collectOver(limit, () => collected++);
    expect(check()).toBe(false);
    const buffers = Array.from({ length: 64 }, () => Buffer.alloc(1024 * 1024, 1));
    expect(check()).toBe(true);
    expect(collected).toBe(1);
    expect(buffers).toHaveLength(64);
  });

  it('does collect by default: the heap in use drops after garbage is made', () => {
    let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({
      i,
      text: `item ${i}`,
    }));
    const before = getHeapStatistics().used_heap_size;
    garbage = undefined;
    expect(collectOver(0)()).toBe(true);
    expect(garbage).toBeUndefined();
    expect(getHeapStatistics().used_heap_size).toBeLessThan(before);
  });
});
