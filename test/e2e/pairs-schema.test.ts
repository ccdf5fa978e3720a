// Pairs files written before schema v2 are still read: the same run exported from its v2 pairs and from the
// same pairs rewritten as v1 (no `sources`, `tool_errors`, `wire`) gives the same dataset.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let db: string;
let runId: string;
const pairsFile = () => join(dir.path, 'pairs.jsonl');

beforeAll(async () => {
  dir = tempDir('pairs-schema-');
  db = join(dir.path, 'store.db');
  expect((await run(['ingest', 'sample-sessions', '--db', db])).exitCode).toBe(0);
  const replay = await run(['replay', 'sample-sessions', '--db', db, '--out', pairsFile(), '--json']);
  expect(replay.exitCode, replay.stderr).toBe(0);
  runId = JSON.parse(replay.stdout).id as string;
}, 120_000);
afterAll(() => dir?.remove());

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('pairs schema', () => {
  it('writes v2: each pair says where its prompt and tools came from, and which results were errors', () => {
    const pairs = lines(pairsFile());
    expect(pairs).toHaveLength(30);
    for (const pair of pairs) {
      expect(pair.schema).toBe('replay-history.pair/v2');
      // The sample sessions hold no request records and no system prompt: both from the catalogue, the tools
      // from the one written here (no sample is from an agent version whose own list is known).
      expect(pair.sources).toEqual({
        system: 'catalogue',
        tools: 'catalogue',
        tool_list: `replay-history/${String(pair.agent)}`,
      });
      expect(Array.isArray(pair.tool_errors)).toBe(true);
      // A Claude Code pair carries its Anthropic body, rebuilt from the conversation.
      if (pair.agent === 'claude-code')
        expect(pair.wire).toMatchObject({ api: 'anthropic-messages', source: 'conversation' });
      else expect(pair.wire).toBeUndefined();
    }
    // The sample bug fix ran the tests and they failed: that result is marked.
    expect(pairs.some((pair) => (pair.tool_errors as string[]).length > 0)).toBe(true);
  });

  it('exports a v1 pairs file as it exports the same pairs in v2', async () => {
    const v2 = join(dir.path, 'from-v2.jsonl');
    const v1 = join(dir.path, 'from-v1.jsonl');
    const first = await run(['export', '--db', db, '--from', `run:${runId}`, '--out', v2]);
    expect(first.exitCode, first.stderr).toBe(0);
    const old = lines(pairsFile()).map(({ sources: _s, tool_errors: _e, wire: _w, ...rest }) => ({
      ...rest,
      schema: 'replay-history.pair/v1',
    }));
    writeFileSync(pairsFile(), `${old.map((pair) => JSON.stringify(pair)).join('\n')}\n`);
    const second = await run(['export', '--db', db, '--from', `run:${runId}`, '--out', v1]);
    expect(second.exitCode, second.stderr).toBe(0);
    // The same report too: no line of the old file is refused.
    expect(second.stderr.replaceAll(v1, v2)).toBe(first.stderr);
    expect(readFileSync(v1, 'utf8')).toBe(readFileSync(v2, 'utf8'));
    expect(lines(v1)).toHaveLength(30);
  });

  it('keeps a Codex session’s recorded instructions first after a compaction, once', async () => {
    const store = join(dir.path, 'codex.db');
    const out = join(dir.path, 'codex.jsonl');
    const fixture = join(root, 'test', 'fixtures', 'codex', 'compaction.jsonl');
    expect((await run(['ingest', fixture, '--db', store])).exitCode).toBe(0);
    const replay = await run(['replay', '--all', '--db', store, '--out', out, '--json']);
    expect(replay.exitCode, replay.stderr).toBe(0);
    const instructions = (
      JSON.parse(readFileSync(fixture, 'utf8').split('\n')[0] as string) as {
        payload: { base_instructions: { text: string } };
      }
    ).payload.base_instructions.text;
    const pairs = lines(out) as unknown as {
      turn: number;
      messages: { role: string; content: unknown }[];
      sources: unknown;
    }[];
    // Turns before and after the compaction (the fixture compacts before its fourth turn).
    expect(pairs.map((pair) => pair.turn)).toEqual([1, 2, 3, 4, 5]);
    for (const pair of pairs) {
      expect(pair.messages[0]).toEqual({ role: 'system', content: instructions });
      expect(pair.messages.filter((m) => m.content === instructions)).toHaveLength(1);
      expect(pair.sources).toEqual({
        system: 'recorded',
        tools: 'catalogue',
        tool_list: 'replay-history/codex',
      });
    }
  });
});
