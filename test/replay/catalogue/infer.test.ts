import { describe, expect, it } from 'vitest';
import { inferSchema } from '../../../src/replay/catalogue/index.js';
import { schemaProblems } from './schema-check.js';

describe('inferSchema', () => {
  it('gives the empty object schema for no inputs', () => {
    expect(inferSchema([])).toEqual({ type: 'object', properties: {} });
  });

  it('types each property and requires the keys every call has', () => {
    const schema = inferSchema([
      { path: 'a.ts', limit: 10 },
      { path: 'b.ts', recursive: true },
    ]);
    expect(schema).toEqual({
      type: 'object',
      properties: { path: { type: 'string' }, limit: { type: 'integer' }, recursive: { type: 'boolean' } },
      required: ['path'],
    });
  });

  it('leaves a key out of required when one call lacks it, even if the others all have it', () => {
    const schema = inferSchema([{ query: 'x', max: 1 }, { query: 'y', max: 2 }, { query: 'z' }]);
    expect(schema.required).toEqual(['query']);
  });

  it('omits required when no key is in every call', () => {
    expect(inferSchema([{ a: 1 }, { b: 2 }])).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
    });
  });

  it('makes a union where the recorded types differ', () => {
    const schema = inferSchema([{ id: 'abc' }, { id: 42 }, { id: null }]);
    expect(schema.properties?.id).toEqual({ type: ['string', 'integer', 'null'] });
  });

  it('counts integers and fractions together as numbers', () => {
    const schema = inferSchema([{ timeout: 1 }, { timeout: 1.5 }]);
    expect(schema.properties?.timeout).toEqual({ type: 'number' });
  });

  it("types an array's items from every element of every call", () => {
    const schema = inferSchema([{ paths: ['a', 'b'] }, { paths: ['c', 7] }, { paths: [] }]);
    expect(schema.properties?.paths).toEqual({ type: 'array', items: { type: ['string', 'integer'] } });
  });

  it('gives an array seen only empty an open items schema', () => {
    expect(inferSchema([{ tags: [] }]).properties?.tags).toEqual({ type: 'array', items: {} });
  });

  it('infers nested objects, with their own required keys, inside arrays too', () => {
    const schema = inferSchema([
      {
        edits: [
          { old: 'a', new: 'b' },
          { old: 'c', new: 'd', all: true },
        ],
        options: { depth: 2 },
      },
      { edits: [{ old: 'e', new: 'f' }], options: { depth: 3, follow: false } },
    ]);
    expect(schema).toEqual({
      type: 'object',
      properties: {
        edits: {
          type: 'array',
          items: {
            type: 'object',
            properties: { old: { type: 'string' }, new: { type: 'string' }, all: { type: 'boolean' } },
            required: ['old', 'new'],
          },
        },
        options: {
          type: 'object',
          properties: { depth: { type: 'integer' }, follow: { type: 'boolean' } },
          required: ['depth'],
        },
      },
      required: ['edits', 'options'],
    });
  });

  it('merges an object and a text value of one key into one schema', () => {
    const schema = inferSchema([{ message: 'hi' }, { message: { type: 'stop', reason: 'done' } }]);
    expect(schema.properties?.message).toEqual({
      type: ['string', 'object'],
      properties: { type: { type: 'string' }, reason: { type: 'string' } },
      required: ['type', 'reason'],
    });
  });

  it('ignores inputs that are not objects (a free-form tool records raw text)', () => {
    expect(inferSchema(['*** Begin Patch', null, 3, ['x']])).toEqual({ type: 'object', properties: {} });
    expect(inferSchema(['raw', { a: 'x' }])).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });

  it('keeps a recorded "__proto__" key as a property', () => {
    const schema = inferSchema([JSON.parse('{"__proto__": "x"}') as unknown]);
    expect(Object.keys(schema.properties ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype);
  });

  it('is deterministic: the same inputs give the same schema, and a well-formed one', () => {
    const inputs = [
      { a: [1, 'x', { b: null }], c: { d: [[1], []] } },
      { a: [], e: 1.25 },
    ];
    expect(JSON.stringify(inferSchema(inputs))).toBe(JSON.stringify(inferSchema(structuredClone(inputs))));
    expect(schemaProblems(inferSchema(inputs))).toEqual([]);
  });
});
