// The o200k counter's scanner (src/export/o200k.ts) against gpt-tokenizer itself: the same pieces as the
// pattern's regex, and the same counts as gpt-tokenizer's own API, on random texts over every class of
// character the pattern names (and the ones it does not), on the real logs under test/fixtures, and on the
// special tokens' texts, which are counted as text instead of ending the export.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pieceEnd } from '../../src/export/o200k.js';
import { o200k, o200kByLibrary } from '../../src/export/tokenizer.js';

// gpt-tokenizer 4.0.0's O200K_TOKEN_SPLIT_REGEX, written out (it is not exported).
const contraction = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
const pattern = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${contraction}|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${contraction}|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  'gu',
);

const regexPieces = (text: string) => [...text.matchAll(pattern)].map((match) => match[0]);
function scannedPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; ) {
    const end = pieceEnd(text, i);
    pieces.push(text.slice(i, end));
    i = end;
  }
  return pieces;
}

// Each entry is one "character" of the random texts: ASCII of every class the pattern tells apart, the letters
// of the contractions, and Unicode letters, marks, numbers and spaces of each category it names.
const alphabet = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  ...'sSdDmMtTlLvVeErR',
  ...`''''`,
  ...' \t\r\n\v\f/\\.,;:!?-_=+*&^%$#@~`"()[]{}<>|',
  '  ',
  '\n\n',
  '\r\n',
  ' \n',
  '\n/',
  '\u01c5', // ǅ Lt
  '\u02b0', // ʰ Lm
  '\u4e2d', // 中 Lo
  '\u05d0', // א Lo
  '\u00e9', // é Ll
  '\u00c9', // É Lu
  '\u0301', // combining acute, Mn
  '\u0903', // Devanagari visarga, Mc
  '\u0663', // ٣ Nd
  '\u216b', // Ⅻ Nl
  '\u00b2', // ² No
  '\u00a0', // no-break space, \s
  '\u3000', // ideographic space, \s
  '\u2028', // line separator, \s
  '\u0085', // next line: not \s in JavaScript
  '\ufeff', // \s
  '\u2192', // → (Claude Code's Read prefix), Sm
  '\u00a7', // § Po
  '\ud83d\ude00', // 😀 (astral)
  '\ud835\udfce', // 𝟎 (astral digit)
  '\ud800', // a lone surrogate
  '<|endoftext|>',
  '<|im_start|>',
];

// Characters outside the BMP of each class the pattern tells apart, mixed with the ASCII and BMP ones they meet
// in a log (an emoji between words, a mathematical letter or digit inside a word or a number).
const astral = [
  ..."aZ09 \n.'s",
  '\u00e9',
  '\u4e2d',
  '\u0301',
  '\ud83d\ude00', // 😀 So
  '\ud83d\ude80', // 🚀 So
  '\u200d', // zero-width joiner (Cf), inside emoji sequences
  '\ufe0f', // variation selector 16 (Mn)
  '\ud835\udc00', // 𝐀 Lu
  '\ud835\udc1a', // 𝐚 Ll
  '\ud840\udc00', // 𠀀 Lo
  '\ud834\udd67', // 𝅧 Mn
  '\ud835\udfce', // 𝟎 Nd
  '\ud800\udd07', // 𐄇 No
  '\ud800', // lone high surrogate
  '\udc00', // lone low surrogate
];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function texts(count: number, seed: number, narrow?: string[]): string[] {
  const next = random(seed);
  const from = narrow ?? alphabet;
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    let text = '';
    const length = 1 + Math.floor(next() * 40);
    for (let c = 0; c < length; c++) text += from[Math.floor(next() * from.length)];
    out.push(text);
  }
  return out;
}

/** Every file under test/fixtures, as text. */
function fixtureTexts(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) walk(path);
      else if (stat.size < 4_000_000) found.push(readFileSync(path, 'utf8'));
    }
  };
  walk(join(import.meta.dirname, '..', 'fixtures'));
  return found;
}

describe('the o200k scanner', () => {
  it('cuts every text into the pieces of the pattern’s regex, characters outside the BMP included', () => {
    const all = [...texts(4000, 1), ...texts(4000, 2, alphabet.slice(0, 120)), ...texts(4000, 5, astral)];
    expect(all.filter((text) => /[\ud800-\udfff]/.test(text)).length).toBeGreaterThan(4000);
    for (const text of all) expect(scannedPieces(text), JSON.stringify(text)).toEqual(regexPieces(text));
  });

  it('counts what gpt-tokenizer counts, on random texts and on the real logs of the fixtures', () => {
    const all = [...texts(6000, 3), ...texts(2000, 6, astral), ...fixtureTexts()];
    expect(all.length).toBeGreaterThan(8000);
    let mismatched = 0;
    for (const text of all) if (o200k.count(text) !== o200kByLibrary(text)) mismatched++;
    expect(mismatched).toBe(0);
    const long = texts(500, 4).join('\nx');
    expect(o200k.count(long)).toBe(o200kByLibrary(long));
  });

  it('counts the text of special tokens as text instead of refusing it', () => {
    const text = 'a model trained on <|endoftext|> and <|im_start|>user\nhi<|im_end|>';
    expect(() => o200kByLibrary(text)).not.toThrow();
    // `<|`, `endoftext`, `|>`: pieces of their own, so the count is the sum of theirs
    expect(o200k.count('<|endoftext|>')).toBe(
      o200k.count('<|') + o200k.count('endoftext') + o200k.count('|>'),
    );
    expect(o200k.count(text)).toBe(o200kByLibrary(text));
  });
});
