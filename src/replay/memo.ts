/**
 * `convert` made once per input list and kept as long as the list is. A session's tool list is converted for
 * every one of its turns (chat tools, Anthropic and Responses definitions); converting it once also gives every
 * turn the same output list, which lets the pair writer encode it once (`pairParts`). Callers never change
 * the lists they are given or get back.
 */
export function perList<T extends object, R>(convert: (list: T) => R): (list: T) => R {
  const made = new WeakMap<T, R>();
  return (list) => {
    let result = made.get(list);
    if (result === undefined) {
      result = convert(list);
      made.set(list, result);
    }
    return result;
  };
}

// Lists are never changed once a session's requests are built (each turn gets new ones where they differ), so a
// list's JSON can be kept as long as the list itself is. It is kept as UTF-8 bytes: a turn's request body, its
// digest and its pair line are all bytes in the end, and a string joined from hundreds of pieces costs a copy
// of the whole (flattening) each time it is encoded — more than making the line did.

/**
 * JSON made as a list of UTF-8 pieces, the shared ones (`bytes`) by reference, the rest (`text`) encoded as
 * they come. The pieces are whole JSON tokens, never half a character, so their bytes put end to end are the
 * UTF-8 of the JSON put end to end. Not changed once `done`.
 */
export class JsonParts {
  private readonly pieces: Buffer[] = [];
  private pending = '';
  private size = 0;

  text(json: string): this {
    this.pending += json;
    return this;
  }

  bytes(piece: Buffer): this {
    this.flush();
    this.pieces.push(piece);
    this.size += piece.length;
    return this;
  }

  /** Another JSON's pieces, by reference. */
  parts(other: JsonParts): this {
    this.flush();
    for (const piece of other.done()) this.pieces.push(piece);
    this.size += other.size;
    return this;
  }

  done(): readonly Buffer[] {
    this.flush();
    return this.pieces;
  }

  get length(): number {
    this.flush();
    return this.size;
  }

  /** The JSON as one buffer, which is then its only piece (a JSON used in several places is copied once). */
  concat(): Buffer {
    const pieces = this.done();
    if (pieces.length === 1 && pieces[0]) return pieces[0];
    const whole = Buffer.concat(pieces, this.size);
    this.pieces.length = 0;
    this.pieces.push(whole);
    return whole;
  }

  toString(): string {
    return this.concat().toString();
  }

  private flush(): void {
    if (this.pending === '') return;
    const piece = Buffer.from(this.pending);
    this.pending = '';
    this.pieces.push(piece);
    this.size += piece.length;
  }
}

const listed = new WeakMap<object, Buffer>();

/**
 * The UTF-8 of `JSON.stringify(value)`, made once per list or object (see above); other values are serialised
 * each time. `undefined` where JSON.stringify gives it (a value JSON leaves out).
 */
export function listBytes(value: unknown): Buffer | undefined {
  if (typeof value !== 'object' || value === null) {
    const json = JSON.stringify(value);
    return json === undefined ? undefined : Buffer.from(json);
  }
  let bytes = listed.get(value);
  if (bytes === undefined) {
    const json = JSON.stringify(value);
    if (json === undefined) return undefined;
    bytes = Buffer.from(json);
    listed.set(value, bytes);
  }
  return bytes;
}

const itemBytes = new WeakMap<object, Buffer>();

/**
 * `JSON.stringify(items)` for a list of objects, each item's bytes made once while the item lives: consecutive
 * turns of a session share most of their messages, so a turn encodes only what is new to it.
 */
export function itemsParts(items: readonly unknown[], into: JsonParts = new JsonParts()): JsonParts {
  into.text('[');
  let first = true;
  for (const item of items) {
    if (typeof item !== 'object' || item === null) {
      into.text(`${first ? '' : ','}${JSON.stringify(item) ?? 'null'}`);
    } else {
      let made = itemBytes.get(item);
      if (made === undefined) {
        made = Buffer.from(JSON.stringify(item) ?? 'null');
        itemBytes.set(item, made);
      }
      if (!first) into.bytes(comma);
      into.bytes(made);
    }
    first = false;
  }
  return into.text(']');
}

const comma = Buffer.from(',');

/** What `objectParts` writes for a field: JSON text, bytes, pieces, or `undefined` to leave it out. */
export type FieldJson = string | Buffer | JsonParts | undefined;

/**
 * An object's JSON with each field's value made by `field`; `undefined` leaves the field out, as JSON does. An
 * object with `toJSON` is serialised as JSON.stringify would.
 */
export function objectParts(
  value: Record<string, unknown>,
  field: (key: string, value: unknown) => FieldJson,
  into: JsonParts = new JsonParts(),
): JsonParts {
  if (typeof value.toJSON === 'function') return into.text(JSON.stringify(value));
  into.text('{');
  let first = true;
  for (const key of Object.keys(value)) {
    const made = field(key, value[key]);
    if (made === undefined) continue;
    into.text(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    if (typeof made === 'string') into.text(made);
    else if (made instanceof JsonParts) into.parts(made);
    else into.bytes(made);
  }
  return into.text('}');
}
