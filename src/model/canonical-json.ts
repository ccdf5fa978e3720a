import { createHash, type Hash, hash } from 'node:crypto';

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
 * Hash of a list of fields, each length-prefixed, so no two different lists hash alike by shifting text between
 * fields. Small fields are joined and hashed in one call (a call per field cost more than hashing them: a message
 * row has about twenty, a request log thousands); a field of megabytes goes to the hash on its own rather than be
 * copied into the join. The bytes hashed are the same either way: every field's text sits between a prefix and
 * the next, so no surrogate pair can form across two.
 */
export function fieldsHash(fields: readonly (string | number | null)[]): string {
  let joined = '';
  let hasher: Hash | undefined;
  for (const field of fields) {
    if (field === null) {
      joined += '\0n';
      continue;
    }
    const text = String(field);
    joined += `\0${typeof field === 'number' ? 'd' : 's'}${text.length}:`;
    if (text.length < ownUpdate && joined.length < ownUpdate) joined += text;
    else {
      hasher ??= createHash('sha256');
      hasher.update(joined);
      hasher.update(text);
      joined = '';
    }
  }
  return hasher ? hasher.update(joined).digest('hex') : hash('sha256', joined, 'hex');
}

/** From this length a field is hashed by a call of its own instead of being joined to the others. */
const ownUpdate = 64 * 1024;

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
