// Rewinds leave abandoned branches in the uuid tree; each one that holds a model response is a session of its own
// (kind `branch`, parent = the session), sharing the prefix. One quirk, one hand-made file
// (test/fixtures/claude-code/rewind-branches.jsonl); the expected numbers are derived here from its raw lines.

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

const file = join(root, 'test', 'fixtures', 'claude-code', 'rewind-branches.jsonl');

interface Raw {
  type: string;
  uuid: string;
  parentUuid: string | null;
  timestamp: string;
  sessionId: string;
  message: { id?: string; content: string | { type: string }[] };
}
const raw = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((text) => JSON.parse(text) as Raw);

// The fork: the node with several child prompts. The latest prompt is the one the rewind continued.
const kids = (uuid: string) => raw.filter((line) => line.parentUuid === uuid);
const isPrompt = (line: Raw) => line.type === 'user' && typeof line.message.content === 'string';
const fork = raw.find((line) => kids(line.uuid).filter(isPrompt).length > 1) as Raw;
const prompts = kids(fork.uuid)
  .filter(isPrompt)
  .sort((a, b) => a.timestamp.localeCompare(b.timestamp));
const subtree = (line: Raw): Raw[] => [line, ...kids(line.uuid).flatMap(subtree)];
const prefix: Raw[] = [];
for (let at: Raw | undefined = fork; at; at = raw.find((line) => line.uuid === at?.parentUuid))
  prefix.unshift(at);
// A message per user line (a result line is a tool message) and per API response.
const messagesIn = (lines: Raw[]) =>
  lines.filter((l) => l.type === 'user').length +
  new Set(lines.filter((l) => l.type === 'assistant').map((l) => l.message.id)).size;
const turnsIn = (lines: Raw[]) =>
  new Set(lines.filter((l) => l.type === 'assistant').map((l) => l.message.id)).size;
const callsIn = (lines: Raw[]) =>
  lines.flatMap((l) =>
    l.type === 'assistant' && Array.isArray(l.message.content)
      ? l.message.content.filter((b) => b.type === 'tool_use')
      : [],
  ).length;
const abandoned = prompts.slice(0, -1).map(subtree);
const answered = abandoned.filter((lines) => lines.some((l) => l.type === 'assistant'));
const expected = answered.map((own) => ({
  leaf: own.filter((l) => kids(l.uuid).length === 0).at(-1)?.uuid,
  all: [messagesIn([...prefix, ...own]), turnsIn([...prefix, ...own]), callsIn([...prefix, ...own])],
  own: [messagesIn(own), turnsIn(own), callsIn(own)],
}));

describe('abandoned rewind branches', () => {
  it('are what the fixture holds: three abandoned prompts, two of them answered', () => {
    expect(abandoned).toHaveLength(3);
    expect(answered).toHaveLength(2);
    expect(expected.map((e) => e.own)).toEqual([
      [4, 2, 1],
      [2, 1, 0],
    ]);
  });

  const sessions = [...claudeCode.parseFile(file).sessions];
  const main = sessions.find((s) => s.kind === 'main');
  const branches = sessions.filter((s) => s.kind === 'branch');

  it('each answered one is a session of kind branch, parent the session, with its whole chain', () => {
    const kept = [...prefix, ...subtree(prompts.at(-1) as Raw)];
    expect([messagesIn(kept), turnsIn(kept), callsIn(kept)]).toEqual([
      main?.messages.length,
      splitTurns(main?.messages ?? []).length,
      main?.messages.flatMap(toolCalls).length,
    ]);
    expect(branches.map((b) => b.sourceId)).toEqual(
      expected.map((e) => `${fork.sessionId}/branch-${e.leaf}`),
    );
    expect(branches.map((b) => b.parentId)).toEqual(branches.map(() => main?.id));
    expect(
      branches.map((b) => [
        b.messages.length,
        splitTurns(b.messages).length,
        b.messages.flatMap(toolCalls).length,
      ]),
    ).toEqual(expected.map((e) => e.all));
    expect(branches.map((b) => b.title)).toEqual([
      'branch: Rename it to helpers.py',
      'branch: Also add tests',
    ]);
  });

  const store = tempStore();
  afterAll(() => store.close());
  it('the store keeps the shared prefix once: each branch continues the session at the fork', () => {
    const [summary] = ingest(store.db, [file]);
    expect(summary?.sessions.new).toBe(1 + expected.length);
    const sessions = new SessionStore(store.db);
    const rows = [...sessions.list()].filter((row) => row.kind === 'branch');
    expect(rows.map((row) => [row.message_count, row.turn_count, row.tool_call_count])).toEqual(
      expected.map((e) => e.own),
    );
    for (const row of rows) {
      expect(row.continues_session_id).toBe(main?.id);
      expect(row.continues_native_id).toBe(fork.uuid);
      const loaded = sessions.load(row.id);
      expect(loaded?.own).toBe(messagesIn(prefix));
    }
    // Branches are left out of "every session" unless asked for: datasets would count the prefix twice.
    expect(sessions.allIds()).toEqual([main?.id]);
    expect(sessions.allIds({ branches: true })).toHaveLength(1 + expected.length);
  });
});
