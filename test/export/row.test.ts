// A row's line and duplicate digest (src/export/row.ts): the line is JSON.stringify's, byte for byte, and two
// rows get the same digest exactly when their canonical forms are equal, whether or not their tools' JSON was
// reused from the row before.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RowSerialiser } from '../../src/export/row.js';
import { canonicalJson } from '../../src/model/canonical-json.js';

const tool = (name: string, description = `the ${name} tool`) => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties: { path: { type: 'string' } } } },
});
const reordered = (name: string) => ({
  function: {
    parameters: { properties: { path: { type: 'string' } }, type: 'object' },
    description: `the ${name} tool`,
    name,
  },
  type: 'function',
});
const messages = (text: string) => [
  { role: 'user', content: text },
  { role: 'assistant', content: 'ok \u2028 done' },
];

const rows: Record<string, unknown>[] = [
  { messages: messages('a'), tools: [tool('Read'), tool('Bash')] },
  { messages: messages('a'), tools: [tool('Read'), tool('Bash')] }, // the same values, fresh objects
  { tools: [reordered('Read'), reordered('Bash')], messages: messages('a') }, // the same, other key orders
  { messages: messages('b'), tools: [tool('Read'), tool('Bash')] },
  { messages: messages('a'), tools: [tool('Read'), tool('Bash', 'another description')] },
  { messages: messages('a'), tools: [tool('Read')] },
  { messages: messages('a'), tools: [] },
  { messages: messages('a') },
  { messages: messages('a'), tools: undefined, extra: undefined },
  { messages: messages('a'), tools: [tool('Read'), tool('Bash')], note: 'x' },
  { 1: 'integer keys are ordered first', messages: messages('a'), tools: [tool('Read')] },
  { conversations: [{ from: 'human', value: 'a' }], tools: '[{"name":"Read"}]' }, // ShareGPT: tools as text
  { tools: [tool('Read')] }, // the tools alone: one member, both braces on it
  { skipped: undefined, tools: [tool('Read')], also: () => 1 },
];

const canonicalDigest = (row: unknown) => createHash('sha256').update(canonicalJson(row)).digest('base64');

describe('RowSerialiser', () => {
  it('writes what JSON.stringify writes, whatever the row before was', () => {
    for (const order of [rows, [...rows].reverse(), [...rows, ...rows]]) {
      const serialiser = new RowSerialiser();
      for (const row of order) expect(serialiser.serialise(row).line).toBe(JSON.stringify(row));
    }
  });

  it('gives two rows one digest exactly when their canonical forms are equal', () => {
    const serialiser = new RowSerialiser();
    // every pair, in both orders and after other rows, so some digests reuse the tools of the row before
    const digests = [...rows, ...[...rows].reverse()].map((row) => ({
      row,
      digest: serialiser.serialise(row).digest,
    }));
    for (const a of digests)
      for (const b of digests)
        expect(a.digest === b.digest, `${JSON.stringify(a.row)} / ${JSON.stringify(b.row)}`).toBe(
          canonicalDigest(a.row) === canonicalDigest(b.row),
        );
    // the first three rows are one row; the fourth and fifth differ from it in the messages and in the tools
    expect(digests[1]?.digest).toBe(digests[0]?.digest);
    expect(digests[2]?.digest).toBe(digests[0]?.digest);
    expect(digests[3]?.digest).not.toBe(digests[0]?.digest);
    expect(digests[4]?.digest).not.toBe(digests[0]?.digest);
    expect(digests[0]?.digest).toMatch(/^[A-Za-z0-9+/]{22}$/);
  });

  it('serialises rows that are not plain objects whole', () => {
    const serialiser = new RowSerialiser();
    const dated = { messages: messages('a'), tools: [tool('Read')], toJSON: () => ({ other: true }) };
    expect(serialiser.serialise(dated).line).toBe('{"other":true}');
    expect(serialiser.serialise([1, { b: 2, a: 1 }]).line).toBe('[1,{"b":2,"a":1}]');
  });
});
