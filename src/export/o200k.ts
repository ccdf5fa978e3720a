// Counting o200k_base tokens without gpt-tokenizer's pre-tokenizing regex. gpt-tokenizer splits a text into
// pieces with one large Unicode regex through `matchAll` (an array and a string per piece) before looking each
// piece up: two thirds of an export's counting time. The same split is made here by a scanner over the text's
// UTF-16 code units, each piece looked up in gpt-tokenizer's own ranks and merged by its own byte-pair encoder,
// so the counts are its counts (test/export/o200k.test.ts compares the two on every class of character the
// pattern names). The parts of a text holding a surrogate (a character outside the BMP) are counted by
// gpt-tokenizer itself (see scanner).
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

const classes = new Uint8Array(65536);
const upper = /[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]/u;
const lower = /[\p{Ll}\p{Lm}\p{Lo}\p{M}]/u;
const letter = /\p{L}/u;
const number = /\p{N}/u;
const space = /\s/u;

function classify(unit: number): number {
  const c = String.fromCharCode(unit);
  let bits = KNOWN;
  if (upper.test(c)) bits |= UPPER;
  if (lower.test(c)) bits |= LOWER;
  if (letter.test(c)) bits |= LETTER;
  if (number.test(c)) bits |= NUMBER;
  if (space.test(c)) bits |= SPACE;
  classes[unit] = bits;
  return bits;
}

const at = (text: string, i: number): number => {
  const bits = classes[text.charCodeAt(i)] as number;
  return bits !== 0 ? bits : classify(text.charCodeAt(i));
};

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
  // U* gives back units one at a time until L+ can start (a unit in both classes, or the one after the run)
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
  const open = opener(text, i);
  // an opener at the text's end leaves a1 and a2 nothing to match: -1
  let end = open ? a1(text, i + 1) : -1;
  if (end < 0) end = a1(text, i);
  if (end < 0 && open) end = a2(text, i + 1);
  if (end < 0) end = a2(text, i);
  if (end >= 0) return end;
  const bits = at(text, i);
  if ((bits & NUMBER) !== 0) {
    let k = i + 1;
    while (k < n && k < i + 3 && (at(text, k) & NUMBER) !== 0) k++;
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

/** Whether the text holds a surrogate (then the scanner does not count it). */
const astral = /[\uD800-\uDFFF]/;

/** Pieces counted, kept up to this many (then forgotten at once): most pieces of a text are words seen before. */
const PIECES_MAX = 400_000;

/**
 * A counter of o200k tokens over `ranks`, with `whole` (gpt-tokenizer's own count) for the parts it leaves: a
 * text holding a surrogate is cut where a piece must end (after a line feed followed by anything but a space or
 * a slash: no piece of the pattern holds a line feed followed by anything else, and no piece before the cut
 * looks beyond it), and only the parts holding one are counted by `whole`.
 */
export function scanner(ranks: Ranks, whole: (text: string) => number): (text: string) => number {
  const known = new Map<string, number>();
  const scan = (text: string): number => {
    let tokens = 0;
    let i = 0;
    while (i < text.length) {
      const end = pieceEnd(text, i);
      // every ASCII character is a token of its own (the first 128 byte ranks)
      if (end - i === 1 && text.charCodeAt(i) < 128) tokens++;
      else {
        const piece = text.slice(i, end);
        let n = known.get(piece);
        if (n === undefined) {
          n = ranks.rank(piece) !== undefined ? 1 : ranks.merge(piece);
          if (known.size >= PIECES_MAX) known.clear();
          known.set(piece, n);
        }
        tokens += n;
      }
      i = end;
    }
    return tokens;
  };
  return (text) => {
    if (!astral.test(text)) return scan(text);
    let tokens = 0;
    let start = 0;
    for (
      let cut = text.indexOf('\n');
      cut !== -1 && cut + 1 < text.length;
      cut = text.indexOf('\n', cut + 1)
    ) {
      const next = text.charCodeAt(cut + 1);
      if (next === 47 || (at(text, cut + 1) & SPACE) !== 0) continue;
      tokens += part(text.slice(start, cut + 1));
      start = cut + 1;
    }
    return tokens + part(start === 0 ? text : text.slice(start));
  };
  function part(text: string): number {
    return astral.test(text) ? whole(text) : scan(text);
  }
}
