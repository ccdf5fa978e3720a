// The store takes a Codex message's parts column from the JSON the reader made for the message's id
// (src/sources/parts-json.ts) instead of serializing the parts again. That is right only while nothing changes the
// parts between the two: checked here against a fresh JSON.stringify of every stored message's parts, on every
// Codex rollout among the fixtures, and for a reader that records nothing (Claude Code).

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCode } from '../../src/sources/claude-code/index.js';
import { codex } from '../../src/sources/codex/index.js';
import { ingest } from '../../src/sources/ingest.js';
import { recordedPartsJson } from '../../src/sources/parts-json.js';
import type { SourceAdapter } from '../../src/sources/types.js';
import { root } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';

function rollouts(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => join(dir, name));
}

let store: ReturnType<typeof tempStore>;
beforeEach(() => {
  store = tempStore();
});
afterEach(() => store.close());

/** Every stored message's parts column against JSON.stringify of the parts a fresh read of its file made. */
function expectStoredAsSerialized(adapter: SourceAdapter, files: string[]): number {
  let checked = 0;
  for (const file of files) {
    if (!adapter.detect(file)) continue;
    ingest(store.db, [file]);
    for (const session of adapter.parseFile(file).sessions) {
      const stored = store.db
        .prepare('SELECT native_id, parts FROM messages WHERE session_id = ? ORDER BY seq')
        .all(session.id) as { native_id: string | null; parts: string }[];
      const byId = new Map(session.messages.map((m) => [m.nativeId ?? null, m]));
      for (const row of stored) {
        const message = byId.get(row.native_id);
        if (!message) continue;
        expect(row.parts, `${file}: ${row.native_id}`).toBe(JSON.stringify(message.parts));
        checked++;
      }
    }
  }
  return checked;
}

describe('parts JSON a reader made for itself', () => {
  it('is what JSON.stringify makes of the parts as stored, for every Codex fixture', () => {
    const files = [
      ...rollouts(join(root, 'test', 'fixtures', 'codex')),
      ...rollouts(join(root, 'test', 'fixtures', 'real', 'codex')),
      ...rollouts(join(root, 'test', 'fixtures', 'real', 'codex-0.169.0')),
    ];
    expect(expectStoredAsSerialized(codex, files)).toBeGreaterThan(100);
  });

  it('is recorded by Codex and by no other reader', () => {
    const rollout = rollouts(join(root, 'test', 'fixtures', 'codex'))[0] as string;
    const [session] = codex.parseFile(rollout).sessions;
    expect(session && recordedPartsJson(session.messages[0]?.parts ?? [])).toBeDefined();
    const transcript = join(root, 'test', 'fixtures', 'claude-code', 'tool-results.jsonl');
    const [claude] = claudeCode.parseFile(transcript).sessions;
    expect(claude?.messages.every((m) => recordedPartsJson(m.parts) === undefined)).toBe(true);
  });
});
