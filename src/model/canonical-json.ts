import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so two values that differ only in key order serialize alike.
 * Arrays keep their order (it means something). `undefined` members are dropped, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)));
  if (value !== null && typeof value === 'object') {
    const source = value as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(source).sort()) {
      const member = source[key];
      if (member !== undefined) sorted[key] = sortKeys(member);
    }
    return sorted;
  }
  return value;
}

export function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Content hash of any JSON value, independent of key order. */
export function contentHash(value: unknown): string {
  return sha256(canonicalJson(value));
}

/**
 * Hash of a list of fields without joining them into one string first (fields can be megabytes). Each field is
 * length-prefixed, so no two different lists hash alike by shifting text between fields.
 */
export function fieldsHash(fields: readonly (string | number | null)[]): string {
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
}
