import { describe, expect, it } from 'vitest';
import { KeywordSet } from '../../src/export/redact/keywords.js';

// Every KeywordSet shares one automaton and the answer for the last text (redaction asks several sets about the
// same text in turn): each set must still answer with its own indices, for the text it is asked about.

const naive = (keywords: readonly string[], text: string) =>
  new Set(keywords.flatMap((k, i) => (text.toLowerCase().includes(k.toLowerCase()) ? [i] : [])));

describe('KeywordSet', () => {
  it('answers each set with its own indices, ASCII case aside, from one search of a text', () => {
    const a = new KeywordSet(['token', 'Secret', 'ghp_']);
    const b = new KeywordSet(['secret', 'api_key', 'tok']);
    const text = 'export GHP_TOKEN=…; a SECRET here, ké tokens';
    expect(a.found(text)).toEqual(new Set([0, 1, 2]));
    expect(b.found(text)).toEqual(new Set([0, 2]));
    expect(b.found('nothing')).toEqual(new Set());
    expect(a.found(text)).toEqual(new Set([0, 1, 2]));
  });

  it('takes sets made after a search, and finds keywords that overlap or repeat', () => {
    const first = new KeywordSet(['she', 'he', 'hers']);
    expect(first.found('ushers')).toEqual(new Set([0, 1, 2]));
    const later = new KeywordSet(['ush', 'rs', 'zzz']);
    expect(later.found('ushers')).toEqual(new Set([0, 1]));
    expect(first.found('hehehe')).toEqual(new Set([1]));
    expect(later.found('ä rs ß')).toEqual(new Set([1]));
  });

  it('agrees with a search per keyword on random texts', () => {
    const words = ['key', 'api_key', 'pass', 'password', 'aws', 'akia', 'xox', 'ey', 'ss', '-----begin'];
    const set = new KeywordSet(words);
    const other = new KeywordSet(['word', 'sec']);
    const alphabet = 'keyapiKEY_passwordAWSakiaxo-----BEGINsé \n';
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 300; n++) {
      let text = '';
      for (let i = 0, len = Math.floor(random() * 60); i < len; i++)
        text += alphabet[Math.floor(random() * alphabet.length)];
      expect({ text, found: set.found(text) }).toEqual({ text, found: naive(words, text) });
      expect({ text, found: other.found(text) }).toEqual({ text, found: naive(['word', 'sec'], text) });
    }
  });

  it('refuses a keyword outside ASCII', () => {
    expect(() => new KeywordSet(['clé'])).toThrow(/only ASCII/);
  });
});
