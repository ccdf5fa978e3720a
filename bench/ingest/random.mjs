// Seeded randomness shared by the corpus generators: mulberry32 seeded through a string hash, so any seed value
// (number or text) gives the same corpus on every machine.

export function hashSeed(text) {
  let h = 1779033703 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  h = Math.imul(h ^ (h >>> 16), 2246822507);
  h = Math.imul(h ^ (h >>> 13), 3266489909);
  return (h ^ (h >>> 16)) >>> 0;
}

export const HEX = '0123456789abcdef';
export const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export class Rng {
  constructor(seed) {
    this.state = hashSeed(String(seed)) || 1;
  }
  next() {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p) {
    return this.next() < p;
  }
  pick(list) {
    return list[Math.floor(this.next() * list.length)];
  }
  /** Pick from [[weight, value], ...]. */
  weighted(pairs) {
    let total = 0;
    for (const [w] of pairs) total += w;
    let r = this.next() * total;
    for (const [w, v] of pairs) {
      r -= w;
      if (r < 0) return v;
    }
    return pairs[pairs.length - 1][1];
  }
  normal() {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  /** Heavy-tailed sizes: most values near the median, a long tail above it. */
  logNormal(median, sigma) {
    return median * Math.exp(sigma * this.normal());
  }
  chars(alphabet, n) {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
  hex(n) {
    return this.chars(HEX, n);
  }
  uuid() {
    const h = this.hex(32);
    const variant = HEX[8 + Math.floor(this.next() * 4)];
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20)}`;
  }
  /** An independent stream for one part of the corpus (keeps sessions stable if another part changes). */
  fork(label) {
    return new Rng(`${this.next()}/${label}`);
  }
}
