// Structural checks of the JSON Schema subset the catalogue writes, and of recorded arguments against a schema.
// Written for these tests so they need no schema validator library.

import type { JsonSchema } from '../../../src/replay/catalogue/types.js';

const jsonTypes = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typesOf(schema: Record<string, unknown>): string[] {
  const { type } = schema;
  if (type === undefined) return [];
  return Array.isArray(type) ? type.map(String) : [String(type)];
}

/** What is wrong with a schema, as "path: problem" lines; empty when it is well formed. */
export function schemaProblems(schema: unknown, path = '$'): string[] {
  if (!isPlainObject(schema)) return [`${path}: not an object`];
  const problems: string[] = [];
  const rawType = schema.type;
  if (rawType !== undefined && typeof rawType !== 'string' && !Array.isArray(rawType)) {
    problems.push(`${path}: type is neither a string nor a list`);
  }
  const types = typesOf(schema);
  if (Array.isArray(rawType) && rawType.length === 0) problems.push(`${path}: empty type list`);
  if (new Set(types).size !== types.length) problems.push(`${path}: repeated type`);
  for (const type of types) if (!jsonTypes.has(type)) problems.push(`${path}: unknown type ${type}`);
  if (schema.description !== undefined && typeof schema.description !== 'string') {
    problems.push(`${path}: description is not text`);
  }

  const { properties, required, items, additionalProperties, anyOf } = schema;
  if (properties !== undefined) {
    if (!isPlainObject(properties)) problems.push(`${path}: properties is not an object`);
    else {
      for (const [key, value] of Object.entries(properties)) {
        problems.push(...schemaProblems(value, `${path}.properties[${JSON.stringify(key)}]`));
      }
    }
  }
  if (required !== undefined) {
    if (!Array.isArray(required) || !required.every((key) => typeof key === 'string')) {
      problems.push(`${path}: required is not a list of names`);
    } else {
      if (new Set(required).size !== required.length) problems.push(`${path}: repeated required name`);
      const declared = isPlainObject(properties) ? properties : {};
      for (const key of required) {
        if (!Object.hasOwn(declared, key)) problems.push(`${path}: required "${key}" is not a property`);
      }
    }
  }
  if (types.includes('object') && properties === undefined && additionalProperties === undefined) {
    problems.push(`${path}: object without properties or additionalProperties`);
  }
  if (items !== undefined) problems.push(...schemaProblems(items, `${path}.items`));
  if (types.includes('array') && items === undefined) problems.push(`${path}: array without items`);
  if (isPlainObject(additionalProperties)) {
    problems.push(...schemaProblems(additionalProperties, `${path}.additionalProperties`));
  } else if (additionalProperties !== undefined && typeof additionalProperties !== 'boolean') {
    problems.push(`${path}: additionalProperties is neither a schema nor a boolean`);
  }
  if (anyOf !== undefined) {
    if (!Array.isArray(anyOf) || anyOf.length === 0) problems.push(`${path}: anyOf is not a non-empty list`);
    else {
      for (const [index, option] of anyOf.entries()) {
        problems.push(...schemaProblems(option, `${path}.anyOf[${index}]`));
      }
    }
  }
  if (schema.enum !== undefined) {
    const values = schema.enum;
    if (!Array.isArray(values) || values.length === 0) problems.push(`${path}: enum is not a non-empty list`);
    else {
      if (new Set(values).size !== values.length) problems.push(`${path}: repeated enum value`);
      if (types.includes('string') && !values.every((value) => typeof value === 'string')) {
        problems.push(`${path}: enum of a string holds a non-string`);
      }
    }
  }
  return problems;
}

/**
 * Keys of a recorded argument value that the schema does not declare, as paths ("edits[0].old_text"). Only objects
 * with declared properties are checked (a free-form map allows any key); anyOf passes when one option fits.
 */
export function undeclaredKeys(value: unknown, schema: JsonSchema, path = ''): string[] {
  if (schema.anyOf !== undefined) {
    const tries = schema.anyOf.map((option) => undeclaredKeys(value, option, path));
    return tries.some((found) => found.length === 0) ? [] : (tries[0] ?? []);
  }
  if (Array.isArray(value)) {
    return schema.items === undefined
      ? []
      : value.flatMap((element, index) =>
          undeclaredKeys(element, schema.items as JsonSchema, `${path}[${index}]`),
        );
  }
  if (!isPlainObject(value) || schema.properties === undefined) return [];
  const { properties } = schema;
  return Object.entries(value).flatMap(([key, inner]) => {
    const at = path === '' ? key : `${path}.${key}`;
    const declared = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (declared === undefined) {
      const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
      return open ? [] : [at];
    }
    return undeclaredKeys(inner, declared, at);
  });
}
