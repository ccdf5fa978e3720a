import type { Part } from '../model/session.js';

/**
 * The JSON of a message's parts, as a reader serialized it for its own use (Codex hashes it into each message's
 * id), so that the store does not serialize the same parts again (issue 21: for a Codex rollout that second
 * JSON.stringify was about 4 % of the ingest). A reader records its JSON only once its parts are final: nothing
 * may change them between `recordPartsJson` and the store's save.
 */
const known = new WeakMap<readonly Part[], string>();

/** Serializes the parts and records the JSON for the store. */
export function recordPartsJson(parts: readonly Part[]): string {
  let json = known.get(parts);
  if (json === undefined) {
    json = JSON.stringify(parts);
    known.set(parts, json);
  }
  return json;
}

/** The JSON a reader recorded for these parts; undefined when it recorded none. */
export function recordedPartsJson(parts: readonly Part[]): string | undefined {
  return known.get(parts);
}
