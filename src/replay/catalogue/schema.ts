// Small builders for the JSON schemas of the catalogue, so each agent file reads as a list of tools rather than
// nested object literals. Pure functions.

import type { JsonSchema, ToolSpec } from './types.js';

function described(schema: JsonSchema, description: string | undefined): JsonSchema {
  return description === undefined ? schema : { ...schema, description };
}

/** The value the agent uses when the argument is left out: a call giving it equals one leaving it out. */
export function withDefault(schema: JsonSchema, value: unknown): JsonSchema {
  return { ...schema, default: value };
}

export function text(description?: string): JsonSchema {
  return described({ type: 'string' }, description);
}

export function integer(description?: string): JsonSchema {
  return described({ type: 'integer' }, description);
}

export function number(description?: string): JsonSchema {
  return described({ type: 'number' }, description);
}

export function flag(description?: string): JsonSchema {
  return described({ type: 'boolean' }, description);
}

/** A string limited to the values the agent accepts. */
export function choice(values: readonly string[], description?: string): JsonSchema {
  return described({ type: 'string', enum: [...values] }, description);
}

/** A value that is one of several shapes. */
export function either(options: readonly JsonSchema[], description?: string): JsonSchema {
  return described({ anyOf: [...options] }, description);
}

export function list(items: JsonSchema, description?: string): JsonSchema {
  return described({ type: 'array', items }, description);
}

/** An object; `required` is left out when empty (an empty list says nothing and some validators reject it). */
export function object(
  properties: Record<string, JsonSchema>,
  required: readonly string[] = [],
  description?: string,
): JsonSchema {
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = [...required];
  return described(schema, description);
}

/** A map from free-form keys to values of one schema (environment variables, answers keyed by question). */
export function record(values: JsonSchema | boolean, description?: string): JsonSchema {
  return described({ type: 'object', additionalProperties: values }, description);
}

export function tool(name: string, description: string, parameters: JsonSchema, readOnly: boolean): ToolSpec {
  return { name, description, parameters, readOnly };
}

/** Freeze a catalogue all the way down: it is shared by every caller, so nobody may change it in place. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
