import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash, fieldsHash, sameJson } from '../../src/model/canonical-json.js';
import { sessionId, shortId } from '../../src/model/ids.js';

describe('canonical JSON', () => {
  it('ignores key order at every depth but keeps array order', () => {
    const a = { b: 1, a: { d: [1, { y: 2, x: 1 }], c: 'z' } };
    const b = { a: { c: 'z', d: [1, { x: 1, y: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":"z","d":[1,{"x":1,"y":2}]},"b":1}');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(contentHash(a)).toBe(contentHash(b));
    expect(contentHash([1, 2])).not.toBe(contentHash([2, 1]));
  });

  it('drops undefined members as JSON does, and distinguishes values that JSON distinguishes', () => {
    expect(canonicalJson({ a: undefined, b: null })).toBe('{"b":null}');
    expect(canonicalJson([undefined])).toBe('[null]');
    expect(contentHash({ a: '1' })).not.toBe(contentHash({ a: 1 }));
    expect(contentHash('x')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('fields hash', () => {
  it('tells apart lists that differ only in where one field ends and the next begins, or null from text', () => {
    expect(fieldsHash(['ab', 'c'])).not.toBe(fieldsHash(['a', 'bc']));
    expect(fieldsHash([null])).not.toBe(fieldsHash(['null']));
    expect(fieldsHash([1])).not.toBe(fieldsHash(['1']));
    expect(fieldsHash(['x', 2, null])).toBe(fieldsHash(['x', 2, null]));
  });

  it('hashes the same bytes as hashing each prefix and field on its own, big fields and lone surrogates too', () => {
    // The definition the stored hashes were made with: one update per prefix and per field.
    const perField = (fields: (string | number | null)[]) => {
      const hash = createHash('sha256');
      for (const field of fields) {
        if (field === null) hash.update('\0n');
        else {
          const text = String(field);
          hash.update(`\0${typeof field === 'number' ? 'd' : 's'}${text.length}:`);
          hash.update(text);
        }
      }
      return hash.digest('hex');
    };
    const lists: (string | number | null)[][] = [
      [],
      [null],
      ['', 0, -1.5, 'é✓'],
      ['\ud800', '\udc00', 'a\ud83d', '\ude00b'],
      ['x'.repeat(70_000), 'y', null, 'z'.repeat(200_000), 3],
      Array.from({ length: 5000 }, (_, i) =>
        i % 3 === 0 ? null : i % 3 === 1 ? i : `field ${i} ${'w'.repeat(i % 50)}`,
      ),
    ];
    for (const fields of lists) expect(fieldsHash(fields)).toBe(perField(fields));
  });
});

describe('session ids', () => {
  it('are stable for the same agent and source id, and differ across agents', () => {
    expect(sessionId('claude-code', 'abc')).toBe(sessionId('claude-code', 'abc'));
    expect(sessionId('claude-code', 'abc')).not.toBe(sessionId('codex', 'abc'));
    expect(sessionId('claude-code', 'abc')).toMatch(/^[0-9a-f]{24}$/);
    // Pinned: ids are stored and shown to users, so the derivation must never change silently.
    expect(sessionId('claude-code', '11111111-1111-4111-8111-111111111111')).toBe('c43954faa8eed98c989bf4f4');
    expect(shortId('0123456789abcdef')).toBe('01234567');
  });
});

describe('sameJson', () => {
  it('is true exactly when JSON.stringify gives the same text, on values parsed from JSON', () => {
    const values = [
      '{"a":1,"b":[1,2,{"c":"x"}]}',
      '{"b":[1,2,{"c":"x"}],"a":1}',
      '{"a":1,"b":[1,2,{"c":"y"}]}',
      '{"a":1,"b":[1,2,{"c":"x"}],"d":null}',
      '{"a":1,"b":[1,2]}',
      '[1,2,{"c":"x"}]',
      '{"0":1}',
      '[1]',
      '"1"',
      '1',
      'null',
      '{}',
      '[]',
      '{"a":{}}',
      '{"a":[]}',
      '{"a":true}',
      '{"a":"true"}',
    ];
    for (const x of values)
      for (const y of values) {
        const [a, b] = [JSON.parse(x), JSON.parse(y)];
        expect({ x, y, same: sameJson(a, b) }).toEqual({
          x,
          y,
          same: JSON.stringify(a) === JSON.stringify(b),
        });
      }
  });

  it('is false when unsure: a member set to undefined', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(false);
  });
});
