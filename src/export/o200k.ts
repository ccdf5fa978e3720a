// Counting o200k_base tokens without gpt-tokenizer's pre-tokenizing regex. gpt-tokenizer splits a text into
// pieces with one large Unicode regex through `matchAll` (an array and a string per piece) before looking each
// piece up: two thirds of an export's counting time. The same split is made here by a scanner over the text's
// UTF-16 code units, each piece looked up in gpt-tokenizer's own ranks and merged by its own byte-pair encoder,
// so the counts are its counts (test/export/o200k.test.ts compares the two on every class of character the
// pattern names). The pattern's flag `u` makes it match code points: a character outside the BMP (an emoji, a
// mathematical letter) is two code units here, both given the character's classes (see `at`), so a run of a
// class never ends between them, and the two places that count characters (an opener, A3's three digits) step
// over a pair as one.
//
// The pattern (gpt-tokenizer's O200K_TOKEN_SPLIT_REGEX, flags gu), one alternative per line, first match wins:
//   A1  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sdmt]|'ll|'ve|'re)?  (any case)
//   A2  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sdmt]|'ll|'ve|'re)?
//   A3  \p{N}{1,3}
//   A4   ?[^\s\p{L}\p{N}]+[\r\n/]*
//   A5  \s*[\r\n]+
//   A6  \s+(?!\S)
//   A7  \s+

/** The pieces of gpt-tokenizer's encoder this counter uses (its own, so the counts are the same). */
export interface Ranks {
  /** The rank of a piece that is one token, else undefined. */
  rank(piece: string): number | undefined;
  /** The tokens of a piece that is not one. */
  merge(piece: string): number;
}

// Character classes of a UTF-16 code unit, as bits (computed once per code unit with the pattern's own classes).
const UPPER = 1; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const LOWER = 2; // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const LETTER = 4; // \p{L}
const NUMBER = 8; // \p{N}
const SPACE = 16; // \s
const KNOWN = 32;
/** A unit A1 and A2 can take after their opener. */
const WORD = UPPER | LOWER;

/** The classes of each code unit outside the surrogates, filled in as they are met (0: not yet). */
const classes = new Uint8Array(65536);
/** The classes of each character outside the BMP met so far. */
const astralClasses = new Map<number, number>();
const upper = /[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]/u;
const lower = /[\p{Ll}\p{Lm}\p{Lo}\p{M}]/u;
const letter = /\p{L}/u;
const number = /\p{N}/u;
const space = /\s/u;

function classify(c: string): number {
  let bits = KNOWN;
  if (upper.test(c)) bits |= UPPER;
  if (lower.test(c)) bits |= LOWER;
  if (letter.test(c)) bits |= LETTER;
  if (number.test(c)) bits |= NUMBER;
  if (space.test(c)) bits |= SPACE;
  return bits;
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * The classes of the code point the unit at i is part of: both units of a surrogate pair get its character's
 * classes; a lone surrogate is a code point of its own, of none of the pattern's classes (as in the regex).
 */
function classesAt(text: string, i: number): number {
  const unit = text.charCodeAt(i);
  if (unit < 0xd800 || unit > 0xdfff) {
    const bits = classify(String.fromCharCode(unit));
    classes[unit] = bits;
    return bits;
  }
  let point = -1;
  if (isHigh(unit) && isLow(text.charCodeAt(i + 1))) point = text.codePointAt(i) as number;
  else if (isLow(unit) && i > 0 && isHigh(text.charCodeAt(i - 1))) point = text.codePointAt(i - 1) as number;
  if (point < 0) return KNOWN;
  let bits = astralClasses.get(point);
  if (bits === undefined) {
    bits = classify(String.fromCodePoint(point));
    astralClasses.set(point, bits);
  }
  return bits;
}

const at = (text: string, i: number): number => {
  const bits = classes[text.charCodeAt(i)] as number;
  return bits !== 0 ? bits : classesAt(text, i);
};

/** How many code units the code point at i takes: 2 for a surrogate pair, else 1. */
const width = (text: string, i: number): number =>
  isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;

/** [^\r\n\p{L}\p{N}]: may open an A1 or A2 piece. */
const opener = (text: string, i: number): boolean => {
  const unit = text.charCodeAt(i);
  return unit !== 10 && unit !== 13 && (at(text, i) & (LETTER | NUMBER)) === 0;
};

/** The end of a contraction suffix at i (`'s`, `'ll`, …, any case), or i. */
function contraction(text: string, i: number): number {
  if (text.charCodeAt(i) !== 39 || i + 1 >= text.length) return i;
  const next = text.charCodeAt(i + 1) | 32;
  if (next === 115 || next === 100 || next === 109 || next === 116) return i + 2; // s d m t
  if (i + 2 >= text.length) return i;
  const third = text.charCodeAt(i + 2) | 32;
  if ((next === 108 && third === 108) || (next === 118 && third === 101) || (next === 114 && third === 101))
    return i + 3; // ll ve re
  return i;
}

/** The end of the longest run from i of units having `bit`. */
function run(text: string, i: number, bit: number): number {
  let k = i;
  while (k < text.length && (at(text, k) & bit) !== 0) k++;
  return k;
}

/** A1 from j (after its optional opener): the piece's end, or -1. */
function a1(text: string, j: number): number {
  const k = run(text, j, UPPER);
  // U* gives back units one at a time until L+ can start (a unit in both classes, or the one after the run); the
  // regex gives back whole code points, but both units of a pair have the same classes, so the end is the same
  for (let p = k; p >= j; p--) {
    if (p < text.length && (at(text, p) & LOWER) !== 0) return contraction(text, run(text, p, LOWER));
  }
  return -1;
}

/** A2 from j: the piece's end, or -1. */
function a2(text: string, j: number): number {
  if (j >= text.length || (at(text, j) & UPPER) === 0) return -1;
  return contraction(text, run(text, run(text, j, UPPER), LOWER));
}

/** The end of the piece that starts at i. */
export function pieceEnd(text: string, i: number): number {
  const n = text.length;
  const bits = at(text, i);
  const open = opener(text, i);
  const after = i + width(text, i);
  // A1 and A2 need a unit of their classes here or, after an opener, next (else all four tries fail: most
  // punctuation, spaces and digits go straight to the alternatives below)
  if ((bits & WORD) !== 0 || (open && after < n && (at(text, after) & WORD) !== 0)) {
    // an opener at the text's end leaves a1 and a2 nothing to match: -1
    let end = open ? a1(text, after) : -1;
    if (end < 0) end = a1(text, i);
    if (end < 0 && open) end = a2(text, after);
    if (end < 0) end = a2(text, i);
    if (end >= 0) return end;
  }
  if ((bits & NUMBER) !== 0) {
    // at most three digits, a digit outside the BMP (𝟎) being one
    let k = after;
    for (let digits = 1; digits < 3 && k < n && (at(text, k) & NUMBER) !== 0; digits++) k += width(text, k);
    return k;
  }
  // A4: an optional space, then units that are neither space, letter nor number, then \r, \n and /
  const other = (k: number) => k < n && (at(text, k) & (SPACE | LETTER | NUMBER)) === 0;
  let start = -1;
  if (text.charCodeAt(i) === 32 && other(i + 1)) start = i + 1;
  else if (other(i)) start = i;
  if (start >= 0) {
    let k = start + 1;
    while (other(k)) k++;
    while (k < n) {
      const unit = text.charCodeAt(k);
      if (unit !== 10 && unit !== 13 && unit !== 47) break;
      k++;
    }
    return k;
  }
  // i is a space: A5 to the run's last \r or \n, else A6 (the run less its last unit when a non-space follows
  // and the run is longer than one), else A7
  const k = run(text, i, SPACE);
  for (let p = k - 1; p >= i; p--) {
    const unit = text.charCodeAt(p);
    if (unit === 10 || unit === 13) return p + 1;
  }
  if (k === n || k - i === 1) return k;
  return k - 1;
}

/** Pieces counted, kept up to this many (then forgotten at once): most pieces of a text are words seen before. */
const PIECES_MAX = 400_000;

/**
 * The pieces counted so far, found by the code units of the text they are in: an open-addressing table hashed
 * over `text[start, end)` as the scanner meets it, so a piece seen before is neither cut out of its text (a new
 * string) nor hashed by the engine's string hash (a `Map<string, number>` does both for every piece: half of the
 * counting's time). Only a piece met for the first time is sliced and stored.
 */
class Pieces {
  private keys: (string | undefined)[] = new Array(1 << 16).fill(undefined);
  private counts = new Int32Array(1 << 16);
  private hashes = new Int32Array(1 << 16);
  private size = 0;

  /** The count stored for `text[start, end)` whose hash is `hash`, or -1. */
  find(text: string, start: number, end: number, hash: number): number {
    const mask = this.counts.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const key = this.keys[slot];
      if (key === undefined) return -1;
      if (this.hashes[slot] !== hash || key.length !== length) continue;
      let k = 0;
      while (k < length && key.charCodeAt(k) === text.charCodeAt(start + k)) k++;
      if (k === length) return this.counts[slot] as number;
    }
  }

  add(piece: string, hash: number, count: number): void {
    if (this.size >= PIECES_MAX) this.clear();
    else if (this.size * 2 >= this.counts.length) this.grow();
    this.put(piece, hash, count);
    this.size++;
  }

  private put(piece: string, hash: number, count: number): void {
    const mask = this.counts.length - 1;
    let slot = hash & mask;
    while (this.keys[slot] !== undefined) slot = (slot + 1) & mask;
    this.keys[slot] = piece;
    this.hashes[slot] = hash;
    this.counts[slot] = count;
  }

  private grow(): void {
    const { keys, hashes, counts } = this;
    this.keys = new Array(keys.length * 2).fill(undefined);
    this.hashes = new Int32Array(keys.length * 2);
    this.counts = new Int32Array(keys.length * 2);
    for (let slot = 0; slot < keys.length; slot++) {
      const key = keys[slot];
      if (key !== undefined) this.put(key, hashes[slot] as number, counts[slot] as number);
    }
  }

  private clear(): void {
    this.keys.fill(undefined);
    this.size = 0;
  }
}

/** FNV-1a over the code units of `text[start, end)`. */
function hashOf(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5 | 0;
  for (let k = start; k < end; k++) hash = Math.imul(hash ^ text.charCodeAt(k), 0x01000193);
  return hash;
}

/** A counter of o200k tokens over `ranks`: the pattern's pieces, each looked up once. */
export function scanner(ranks: Ranks): (text: string) => number {
  const known = new Pieces();
  return (text) => {
    let tokens = 0;
    let i = 0;
    while (i < text.length) {
      const end = pieceEnd(text, i);
      // every ASCII character is a token of its own (the first 128 byte ranks)
      if (end - i === 1 && text.charCodeAt(i) < 128) tokens++;
      else {
        const hash = hashOf(text, i, end);
        let n = known.find(text, i, end, hash);
        if (n < 0) {
          const piece = text.slice(i, end);
          n = ranks.rank(piece) !== undefined ? 1 : ranks.merge(piece);
          known.add(piece, hash, n);
        }
        tokens += n;
      }
      i = end;
    }
    return tokens;
  };
}
