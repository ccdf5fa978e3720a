// A rendered row as the line written and as the digest that finds exact duplicates. Most rows of an export
// offer the tools the row before offered (the session's catalogue, often the same across sessions): almost
// half of every line. Their JSON, canonical form and digest are made once and reused while the next row's tools
// are the same values with their keys in the same order (`sameJson`, which builds no strings), so what is
// written and which rows count as duplicates are exactly what serialising each row whole gives.
import { createHash } from 'node:crypto';
import { canonicalJson, sameJson } from '../model/canonical-json.js';

/** The member whose serialisation is reused. */
const SHARED = 'tools';
/** A key JavaScript orders before the others whatever order it was set in (then the row is serialised whole). */
const integerLike = /^(?:0|[1-9]\d*)$/;
const isInteger = (key: string) => integerLike.test(key);

/** An object of JSON's own (not an array, a date, a class with toJSON): serialised member by member alike. */
function plain(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !('toJSON' in value);
}

export interface Serialised {
  /** The row's JSON, as JSON.stringify writes it. */
  line: string;
  /** 22 base64 characters of a sha256 over its canonical form (keys sorted at every depth). */
  digest: string;
}

export class RowSerialiser {
  private shared: { value: unknown; json: string; digest: string } | undefined;

  serialise(value: unknown): Serialised {
    const tools = plain(value) ? value[SHARED] : undefined;
    if (!plain(value) || tools === null || typeof tools !== 'object' || Object.keys(value).some(isInteger))
      return {
        line: JSON.stringify(value),
        digest: createHash('sha256').update(canonicalJson(value)).digest('base64').slice(0, 22),
      };
    const row = value;
    const keys = Object.keys(row);
    if (!this.shared || !sameJson(tools, this.shared.value)) {
      this.shared = {
        value: tools,
        json: JSON.stringify(tools),
        digest: createHash('sha256').update(canonicalJson(tools)).digest('base64'),
      };
    }
    const shared = this.shared;
    // JSON.stringify of a plain object: each member with a value, in the object's own order
    const members: string[] = [];
    for (const key of keys) {
      const value = row[key];
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
      members.push(`${JSON.stringify(key)}:${key === SHARED ? shared.json : JSON.stringify(value)}`);
    }
    // The canonical form with the shared member's text replaced by its own digest (after a '#', which no JSON
    // value starts with): equal rows still hash alike, different ones apart.
    const hash = createHash('sha256');
    hash.update('{');
    let first = true;
    for (const key of [...keys].sort()) {
      const value = row[key];
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
      hash.update(`${first ? '' : ','}${JSON.stringify(key)}:`);
      hash.update(key === SHARED ? `#${shared.digest}` : canonicalJson(value));
      first = false;
    }
    hash.update('}');
    return { line: `{${members.join(',')}}`, digest: hash.digest('base64').slice(0, 22) };
  }
}
