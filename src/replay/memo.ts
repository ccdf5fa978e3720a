/**
 * `convert` made once per input list and kept as long as the list is. A session's tool list is converted for
 * every one of its turns (chat tools, Anthropic and Responses definitions); converting it once also gives every
 * turn the same output list, which lets the pair writer serialise it once (`pairLine`). Callers never change
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
// list's JSON can be kept as long as the list itself is.
const listed = new WeakMap<object, string>();

/** `JSON.stringify(value)`, made once per list or object (see above); other values are serialised each time. */
export function listJson(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  let json = listed.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    if (json === undefined) return json;
    listed.set(value, json);
  }
  return json;
}

const itemJson = new WeakMap<object, string>();

/**
 * `JSON.stringify(items)` for a list of objects, each item's JSON made once while the item lives: consecutive
 * turns of a session share most of their messages, so a turn serialises only what is new to it.
 */
export function itemsJson(items: readonly unknown[]): string {
  let json = '';
  for (const item of items) {
    let made = typeof item === 'object' && item !== null ? itemJson.get(item) : undefined;
    if (made === undefined) {
      made = JSON.stringify(item) ?? 'null';
      if (typeof item === 'object' && item !== null) itemJson.set(item, made);
    }
    json += json === '' ? made : `,${made}`;
  }
  return `[${json}]`;
}

/** An object's JSON with each field's value serialised by `field`; `undefined` leaves the field out, as JSON does. */
export function objectJson(
  value: Record<string, unknown>,
  field: (key: string, value: unknown) => string | undefined,
): string {
  if (typeof value.toJSON === 'function') return JSON.stringify(value);
  let json = '';
  for (const key of Object.keys(value)) {
    const serialised = field(key, value[key]);
    if (serialised === undefined) continue;
    json += `${json === '' ? '' : ','}${JSON.stringify(key)}:${serialised}`;
  }
  return `{${json}}`;
}
