// A rendered row as the line written and as the digest that finds exact duplicates. Most rows of an export
// offer the tools the row before offered (the session's catalogue, often the same across sessions): almost
// half of every line. Their JSON, canonical form and digest are made once and reused while the next row's tools
// are the same values with their keys in the same order (`sameJson`, which builds no strings), so what is
// written and which rows count as duplicates are exactly what serialising each row whole gives.
import { createHash, hash } from 'node:crypto';
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

/** What JSON.stringify writes of an object's member (not undefined, a function or a symbol). */
const written = (value: unknown) =>
  value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';

const digestOf = (text: string) => hash('sha256', text, 'base64');

export class RowSerialiser {
  private shared: { value: unknown; json: string; digest: string } | undefined;

  serialise(value: unknown): Serialised {
    const tools = plain(value) && !Object.keys(value).some(isInteger) ? value[SHARED] : undefined;
    if (!plain(value) || tools === undefined || tools === null || typeof tools !== 'object')
      return { line: JSON.stringify(value), digest: digestOf(canonicalJson(value)).slice(0, 22) };
    if (!this.shared || !sameJson(tools, this.shared.value))
      this.shared = { value: tools, json: JSON.stringify(tools), digest: digestOf(canonicalJson(tools)) };
    const shared = this.shared;
    // JSON.stringify of a plain object: each member with a value, in the object's own order
    const keys = Object.keys(value).filter((key) => written(value[key]));
    const members = keys.map(
      (key) => `${JSON.stringify(key)}:${key === SHARED ? shared.json : JSON.stringify(value[key])}`,
    );
    // Braces inside the first and last members, so that `join` makes the whole line one flat string: a string
    // joined onto (`{${…}}`) is a rope that V8 copies whole each time it is searched or encoded.
    // (There is at least one member: the tools, an object.)
    members[0] = `{${members[0]}`;
    members[members.length - 1] = `${members[members.length - 1]}}`;
    const line = members.join(',');
    // The canonical form with the shared member's text replaced by its own digest (after a '#', which no JSON
    // value starts with): equal rows still hash alike, different ones apart.
    const canonical = createHash('sha256');
    canonical.update('{');
    for (const [index, key] of [...keys].sort().entries()) {
      canonical.update(`${index === 0 ? '' : ','}${JSON.stringify(key)}:`);
      canonical.update(key === SHARED ? `#${shared.digest}` : canonicalJson(value[key]));
    }
    canonical.update('}');
    return { line, digest: canonical.digest('base64').slice(0, 22) };
  }
}
