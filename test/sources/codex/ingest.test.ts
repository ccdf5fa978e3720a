import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { splitTurns } from '../../../src/model/turns.js';
import { ingest, type PathSummary } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root, tempDir } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const fixtures = join(root, 'test', 'fixtures', 'codex');
const parentFile = join(
  fixtures,
  'subagents',
  'rollout-2026-03-02T09-00-00-0196b000-0000-7000-8000-00000000000a.jsonl',
);
const childFile = join(
  fixtures,
  'subagents',
  'rollout-2026-03-02T09-00-02-0196b000-0000-7000-8000-00000000000c.jsonl',
);
const parentId = sessionId('codex', '0196b000-0000-7000-8000-00000000000a');
const childId = sessionId('codex', '0196b000-0000-7000-8000-00000000000c');

let store: ReturnType<typeof tempStore>;
let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  store = tempStore();
  dir = tempDir();
});
afterEach(() => {
  store.close();
  dir.remove();
});
const run = (...paths: string[]): PathSummary[] => ingest(store.db, paths);
const count = (sql: string, ...args: unknown[]): number =>
  store.db
    .prepare(sql)
    .pluck()
    .get(...args) as number;

describe('ingesting Codex rollouts', () => {
  it('stores every fixture, reports bad lines with file:line, and reads nothing again when unchanged', () => {
    const [first] = run(fixtures);
    expect(first).toMatchObject({
      files: { read: 12, continued: 0, unchanged: 0, ignored: 0, failed: 0 },
      sessions: { new: 12, updated: 0, unchanged: 0 },
      skippedLines: 4,
    });
    const missing = join(fixtures, 'missing-fields.jsonl');
    expect(first?.warnings.map((w) => `${w.file}:${w.line}`)).toEqual(
      [4, 5, 6, 7, 8].map((n) => `${missing}:${n}`),
    );
    expect(first?.notes).toContain(
      `${join(fixtures, 'raw-arguments.jsonl')}: 2 tool call(s) whose arguments are not valid JSON, kept as the raw string (lines 5, 9)`,
    );
    expect(count("SELECT count(*) FROM sessions WHERE agent = 'codex'")).toBe(12);

    const [again] = run(fixtures);
    expect(again).toMatchObject({
      files: { read: 0, continued: 0, unchanged: 12 },
      sessions: { new: 0, updated: 0, unchanged: 12 },
      messages: 0,
      warnings: [],
    });
  });

  it('stores the history a sub-agent copied from its parent once; the child continues the parent', () => {
    run(join(fixtures, 'subagents'));
    const sessions = new SessionStore(store.db);
    const parent = sessions.row(parentId);
    const child = sessions.row(childId);
    expect(parent).toMatchObject({ kind: 'main', message_count: 10, continues_session_id: null });
    // Instructions, permissions, prompt, first turn and its output are the parent's; 4 messages are the child's.
    expect(child).toMatchObject({
      kind: 'subagent',
      parent_id: parentId,
      message_count: 4,
      continues_session_id: parentId,
    });
    expect(count('SELECT count(*) FROM messages')).toBe(14);
    expect(sessions.spawnedBy(child as NonNullable<typeof child>)).toBe('call_spawn');
    // The child's model still saw the copied history: its first own turn's context starts with it.
    const loaded = sessions.load(childId);
    const turns = splitTurns(loaded?.session.messages ?? [], loaded?.own ?? 0);
    expect(turns).toHaveLength(2);
    expect(turns[0]?.context.map((m) => m.role)).toEqual([
      'system',
      'system',
      'user',
      'assistant',
      'tool',
      'user',
    ]);
  });

  it('keeps the copied history once whichever file is ingested first', () => {
    run(childFile);
    run(parentFile);
    expect(count('SELECT count(*) FROM messages')).toBe(14);
    const sessions = new SessionStore(store.db);
    expect(sessions.row(parentId)?.continues_session_id).toBe(childId);
    expect(sessions.load(parentId)?.session.messages).toHaveLength(10);
  });

  it('two sessions that open with the same instructions and context share nothing', () => {
    const copy = join(dir.path, 'other.jsonl');
    writeFileSync(
      copy,
      readFileSync(join(fixtures, 'basic.jsonl'), 'utf8').replaceAll(
        '0196a000-0000-7000-8000-000000000001',
        '0196a000-0000-7000-8000-0000000000ee',
      ),
    );
    run(join(fixtures, 'basic.jsonl'), copy);
    expect(count('SELECT count(*) FROM sessions WHERE continues_session_id IS NOT NULL')).toBe(0);
    expect(count('SELECT count(*) FROM messages')).toBe(16);
  });

  it('a rollout that grew (a live session) adds only its new messages', () => {
    const live = join(dir.path, 'live.jsonl');
    const lines = readFileSync(join(fixtures, 'basic.jsonl'), 'utf8').trimEnd().split('\n');
    writeFileSync(live, `${lines.slice(0, 16).join('\n')}\n`);
    const [first] = run(live);
    expect(first?.sessions.new).toBe(1);
    expect(count('SELECT count(*) FROM messages')).toBe(7);
    appendFileSync(live, `${lines.slice(16).join('\n')}\n`);
    const [second] = run(live);
    expect(second).toMatchObject({ sessions: { new: 0, updated: 1 }, messages: 1 });
    expect(count('SELECT count(*) FROM messages')).toBe(8);
    // The first seven rows were kept, not rewritten.
    expect(count('SELECT max(seq) FROM messages')).toBe(7);
  });

  it('a corrupt line mid-file is reported and skipped; the rest of the file is stored', () => {
    const file = join(dir.path, 'corrupt.jsonl');
    copyFileSync(join(fixtures, 'parallel.jsonl'), file);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    lines.splice(6, 0, '{"timestamp":"2026-03-01T13:00:01.150Z","type":"response_it');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const [summary] = run(file);
    expect(summary?.warnings).toEqual([
      { file, line: 7, message: expect.stringMatching(/^not valid JSON .*; skipped$/) },
    ]);
    expect(summary?.skippedLines).toBe(1);
    expect(count('SELECT turn_count FROM sessions')).toBe(2);
  });
});
