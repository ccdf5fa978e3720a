/**
 * A set of strings kept as sorted 32-bit hashes, packed as base64: what a reader stores to ask later "was this id
 * in what I read before?" in 4 bytes per id instead of the ids. It can answer yes for an id it never held (two ids
 * sharing a hash), never no for one it did: a reader asks it only to decide whether it must read the file whole
 * again, where a false yes costs time and never correctness.
 */
export class HashSet {
  private values: Uint32Array;
  /** Hashes added since the last pack: a Set, so a read that adds many ids asks about each in constant time. */
  private added = new Set<number>();

  constructor(packed = '') {
    const bytes = Buffer.from(packed, 'base64');
    this.values = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  }

  static of(items: Iterable<string>): HashSet {
    const set = new HashSet();
    for (const item of items) set.add(item);
    return set;
  }

  add(item: string): void {
    this.added.add(hash32(item));
  }

  /** May be true for an item never added (see the class comment); false only for one never added. */
  mayHave(item: string): boolean {
    const hash = hash32(item);
    if (this.added.has(hash)) return true;
    let low = 0;
    let high = this.values.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const value = this.values[middle] as number;
      if (value === hash) return true;
      if (value < hash) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }

  pack(): string {
    if (this.added.size > 0) {
      const merged = new Uint32Array(this.values.length + this.added.size);
      merged.set(this.values);
      merged.set([...this.added], this.values.length);
      merged.sort();
      // Each hash once: the same ids added in another order or more than once pack alike.
      let kept = 0;
      for (let i = 0; i < merged.length; i++)
        if (kept === 0 || merged[i] !== merged[kept - 1]) merged[kept++] = merged[i] as number;
      this.values = merged.subarray(0, kept);
      this.added = new Set();
    }
    return Buffer.from(this.values.buffer, this.values.byteOffset, this.values.byteLength).toString('base64');
  }
}

/** FNV-1a over the UTF-16 code units: cheap, and spread well enough for ids. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
