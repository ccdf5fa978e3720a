import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, where V8 lets us ask for one (it does unless started with flags that forbid it).
 *
 * Why: V8 sizes its heap to the allocation rate, so the garbage a large log leaves behind can sit until much
 * later, and peak memory then grows with how many large files a corpus has instead of with the largest one.
 * Collecting after each large file (and after every 16 MB read in smaller ones: sources/ingest.ts) keeps peak
 * memory flat as the corpus grows (bench/ingest, 50 → 200 MB: peak RSS ×1.48 without, ×1.10 with, at the same
 * speed).
 */
export const collectGarbage: () => void = (() => {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc === 'function') return () => (gc as () => void)();
  } catch {
    // Not available: memory is then only as flat as V8 keeps it on its own.
  }
  return () => {};
})();

/**
 * A full collection only when what V8 holds — its heap in use, garbage included, plus the memory outside it
 * that JS objects own (buffers) — is over `limit` bytes: peak memory is bounded however long the run, and a run
 * V8 keeps under the limit on its own pays nothing. A collection every 256 turns, which a replay did before,
 * cost 2–3 s of CPU in 13 s on 6,413 turns (the collector’s threads take the other core too) for about 30 MiB less
 * peak RSS than V8 left on its own (bench/replay).
 */
export function collectOver(limit: number, collect: () => void = collectGarbage): () => boolean {
  return () => {
    const heap = getHeapStatistics();
    const over = heap.used_heap_size + heap.external_memory > limit;
    if (over) collect();
    return over;
  };
}
