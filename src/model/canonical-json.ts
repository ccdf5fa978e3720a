import { createHash, hash } from 'node:crypto';

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
  return hash('sha256', text, 'hex');
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

/**
 * Whether two JSON values serialise to the same text: the same values with their keys in the same order. Cheaper
 * than serialising both (no strings are built); `false` also when unsure (an `undefined` member).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== others[i]) return false;
    if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}
