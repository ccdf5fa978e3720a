import { describe, expect, it } from 'vitest';
import { ANCHORED, matchesOf } from '../../src/export/redact/anchored.js';
import { LONE_HEX, loneHexMatches, tokenRuns } from '../../src/export/redact/context-rules.js';
import { viewsOf } from '../../src/export/redact/views.js';
import { Redactor } from '../../src/export/redact.js';
import { corpusTexts } from '../helpers/secret-corpus.js';

// Patterns whose leading lookbehind is checked in code, and the bare-token scan written as a loop (issue 21:
// a regex that starts with a lookbehind is tried at every character). Each must find what the regex it stands
// for finds — the same matches, groups and indices — on every view of every text of the redaction corpus, on
// edge cases, and on random texts made of the characters the patterns care about.

const texts = () => corpusTexts().flatMap((text) => viewsOf(text).map((view) => view.text));

function random(
  n: number,
  alphabet = 'aZ9_$-.=:;,?&"\'`{(/+~ \t\n\\xpasswordPWDkeyTOKEN_API--token=Secret ',
): string[] {
  let seed = 11;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let text = '';
    for (let j = 0, len = Math.floor(next() * 120); j < len; j++) {
      // runs of one kind of character, so that long tokens and identifiers occur
      const piece = alphabet[Math.floor(next() * alphabet.length)] as string;
      text += next() < 0.1 ? piece.repeat(Math.floor(next() * 40)) : piece;
    }
    out.push(text);
  }
  return out;
}

const edges = [
  '',
  'password=hunter2pass',
  'xpassword=hunter2pass;pwd=Zq8mLp2vRw',
  'apikey: 9f8e7d6c5b4a3210ffee; my_api_key = "9f8e7d6c5b4a3210ffee"',
  '$apiKey: "x9f8e7d6c5b4"; 1apiKey: "x9f8e7d6c5b4"',
  'FOO_KEY=abc A_B=c aFOO_KEY=abc (MY_TOKEN=abc123def)',
  'run --token abc123def456 -p x--password=abcdef123',
  'file:///home/alice/x /mnt/c/Users/bob/y x/home/carol \\n/home/dan C:\\Users\\eve /Users/frank. "/home/gina"',
  'D:/Users/hal\tE:\\\\Users\\\\ivy (/home/jo) ~/home/kim src/api/Users/list.ts pages/home/index.tsx',
  `${'a'.repeat(300)} ${'b1'.repeat(10)} -${'c'.repeat(30)} ${'Z'.repeat(255)} ${'Y'.repeat(256)}`,
];

const describeMatch = (m: RegExpExecArray) => ({ index: m.index, groups: [...m], indices: m.indices });

describe('patterns with their lookbehind checked in code', () => {
  const all = [...texts(), ...edges, ...random(3000)];

  it('find what the pattern with its lookbehind finds', () => {
    expect(ANCHORED.length).toBeGreaterThanOrEqual(2);
    const differing: { lookbehind: string; text: string }[] = [];
    let matches = 0;
    for (const a of ANCHORED) {
      const oracle = new RegExp(a.lookbehind + a.source, a.flags);
      for (const text of all) {
        const fast = [...matchesOf(a, text)].map(describeMatch);
        matches += fast.length;
        const slow = [...text.matchAll(oracle)].map(describeMatch);
        if (JSON.stringify(fast) !== JSON.stringify(slow))
          differing.push({ lookbehind: a.lookbehind, text: text.slice(0, 160) });
      }
    }
    expect(differing.slice(0, 5)).toEqual([]);
    expect(matches).toBeGreaterThan(100);
  });

  it('bare-token runs are the matches of the token regex', () => {
    const TOKEN = /(?<![A-Za-z0-9_\-.+/=~])[A-Za-z0-9][A-Za-z0-9_\-.+/=~]{19,254}(?![A-Za-z0-9_\-.+/=~])/g;
    const differing: string[] = [];
    let runs = 0;
    for (const text of all) {
      const fast = tokenRuns(text);
      runs += fast.length / 2;
      const slow = [...text.matchAll(TOKEN)].flatMap((m) => [m.index, m.index + m[0].length]);
      if (JSON.stringify(fast) !== JSON.stringify(slow)) differing.push(text.slice(0, 160));
    }
    expect(differing.slice(0, 5)).toEqual([]);
    expect(runs).toBeGreaterThan(1000);
  });

  it('lone hex keys are found where the regex with its lookbehind finds them', () => {
    const hex = random(3000, '0123456789abcdefABCDEF0123456789abcdef \t\n\n\r');
    const edges = [
      '9f8e7d6c5b4a32109f8e7d6c5b4a3210',
      '\n\n\n9f8e7d6c5b4a32109f8e7d6c5b4a3210\n\n',
      ' \n9f8e7d6c5b4a32109f8e7d6c5b4a3210\r\n \r\nnext',
      'a\n\t\n  9f8e7d6c5b4a32109f8e7d6c5b4a3210  \n\n9f8e7d6c5b4a32109f8e7d6c5b4a3211\n',
    ];
    const differing: string[] = [];
    let found = 0;
    for (const text of [...all, ...hex, ...edges]) {
      const fast = [...loneHexMatches(text)].map(describeMatch);
      found += fast.length;
      if (JSON.stringify(fast) !== JSON.stringify([...text.matchAll(LONE_HEX)].map(describeMatch)))
        differing.push(text.slice(0, 160));
    }
    expect(differing.slice(0, 5)).toEqual([]);
    expect(found).toBeGreaterThan(50);
  });

  // A lookbehind taken out can let a pattern start inside every run it used to reject at once; if the rest of the
  // pattern then scans the run, redaction turns quadratic (the inline env rule did: 15 s for one 200,000-character
  // line of capitals and digits). Linear, all of these take well under a second; quadratic, minutes.
  it('redacts long runs of one kind of character in linear time', { timeout: 20_000 }, () => {
    const n = 300_000;
    const texts = [
      `KEY ${'A1'.repeat(n / 2)}=x\n`,
      `x${'AB'.repeat(n / 2)}_C=secret123 KEY`,
      `token ${'-a'.repeat(n / 2)} --token=${'b'.repeat(10)}`,
      `password${' '.repeat(n)}=hunter2 key`,
      `${'a1B2'.repeat(n / 4)} key: "x"`,
      `${'\n\n'.repeat(n / 4)}${'deadbeef'.repeat(4)}\n\n`,
      'API_KEY=\n'.repeat(n / 9),
      `key: "${'x'.repeat(n)}`,
      `key ${'ab'.repeat(n / 2)}: "x"`,
      `token ${'1'.repeat(n)}`,
      `auth: ${'QUJD'.repeat(n / 4)}`,
      `key${'='.repeat(n)}x`,
      `"password": "${'\\n'.repeat(n / 2)}"`,
      `?token=${'%41'.repeat(n / 3)}`,
      Array.from({ length: n / 20 }, (_, i) => `${String(i + 1).padStart(6)}→KEY=v${i}`).join('\n'),
      Array.from({ length: n / 20 }, (_, i) => `+ SECRET_${i}=abc${i}`).join('\n'),
      `${'a@'.repeat(n / 2)}example.com`,
      `/home/${'a'.repeat(n)}`,
      'x/home/'.repeat(n / 7),
      `C:${'\\Users'.repeat(n / 6)}`,
      `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(n)}`,
      `${'a:'.repeat(n / 2)}b@c`,
      'key="a" '.repeat(n / 8),
      `eyJ${'a'.repeat(n)}.eyJ${'b'.repeat(10)}`,
      `KEY=${'DEADBEEF'.repeat(n / 8)}`,
      `password:${'\t'.repeat(n)}x`,
    ];
    const redactor = new Redactor();
    for (const text of texts) expect(typeof redactor.redactText(text)).toBe('string');
  });
});
