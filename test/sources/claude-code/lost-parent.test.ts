// A compact_boundary whose logicalParentUuid names a uuid the file does not hold (seen in a real 2.1.3x
// transcript): the history before the boundary must still be the session's, with a warning. One quirk, one
// hand-made file (test/fixtures/claude-code/compaction-lost-parent.jsonl); the expected counts are taken from its
// raw lines here, not from the adapter.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolCalls } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { claudeCode } from '../../../src/sources/claude-code/index.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const file = join(root, 'test', 'fixtures', 'claude-code', 'compaction-lost-parent.jsonl');

interface Raw {
  type: string;
  uuid: string;
  subtype?: string;
  logicalParentUuid?: string;
  message?: { id?: string; content?: string | { type: string }[] };
}
const raw = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((text) => JSON.parse(text) as Raw);
const uuids = new Set(raw.map((line) => line.uuid));
const boundaryLine = raw.findIndex((line) => line.subtype === 'compact_boundary') + 1;
const boundary = raw[boundaryLine - 1] as Raw;
// Model turns: distinct API responses; tool calls: tool_use blocks; the last conversation line before the boundary.
const responses = new Set(raw.filter((l) => l.type === 'assistant').map((l) => l.message?.id));
const calls = raw.flatMap((l) =>
  l.type === 'assistant' && Array.isArray(l.message?.content)
    ? l.message.content.filter((b) => b.type === 'tool_use')
    : [],
);
const lastBefore = raw
  .slice(0, boundaryLine - 1)
  .map((line, index) => ({ line, number: index + 1 }))
  .filter(({ line }) => line.type === 'user' || line.type === 'assistant')
  .at(-1)?.number;

describe('compact_boundary whose logical parent is not in the file', () => {
  it('is the quirk of the fixture', () => {
    expect(boundary.logicalParentUuid).toBeDefined();
    expect(uuids.has(boundary.logicalParentUuid as string)).toBe(false);
    expect([responses.size, calls.length, lastBefore]).toEqual([5, 3, 6]);
  });

  const result = claudeCode.parseFile(file);
  const sessions = [...result.sessions];

  it('keeps the history before the boundary: every turn and tool call', () => {
    expect(sessions).toHaveLength(1);
    const session = sessions[0];
    const turns = splitTurns(session?.messages ?? []);
    expect(turns).toHaveLength(responses.size);
    expect(session?.messages.flatMap(toolCalls)).toHaveLength(calls.length);
    // The turns after the compaction still see only the summary and what followed it.
    expect(turns[3]?.context[0]?.compaction).toBe(true);
    expect(turns[0]?.context).toHaveLength(1);
  });

  it('says so in a warning naming the boundary and the line the history was joined at', () => {
    expect(result.warnings).toEqual([
      {
        file,
        line: boundaryLine,
        message: expect.stringMatching(
          new RegExp(
            `logical parent ${boundary.logicalParentUuid} is not in the file.*line ${lastBefore}\\b`,
          ),
        ),
      },
    ]);
  });

  const store = tempStore();
  afterAll(() => store.close());
  it('stores all of it, and ingest reports the warning', () => {
    const [summary] = ingest(store.db, [file]);
    expect(summary?.warnings.map((w) => w.line)).toEqual([boundaryLine]);
    const sessions = new SessionStore(store.db);
    const [row] = [...sessions.list()];
    expect([row?.turn_count, row?.tool_call_count]).toEqual([responses.size, calls.length]);
  });
});
