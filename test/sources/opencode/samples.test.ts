// sample-sessions/opencode/opencode.db is what the real opencode 1.18.33 wrote for the scenario in
// test/helpers/opencode-scenario.ts. This file checks the committed store, and regenerates it when asked:
//   OPENCODE_SAMPLES=regenerate npx vitest run test/sources/opencode/samples.test.ts
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { toolCalls } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { opencode } from '../../../src/sources/opencode/index.js';
import type { FileResult, ParsedSession } from '../../../src/sources/types.js';
import { root } from '../../helpers/cli.js';
import { prompts, recordOpencodeSessions, titles } from '../../helpers/opencode-scenario.js';

const samples = join(root, 'sample-sessions', 'opencode');
const sample = join(samples, 'opencode.db');
// The project path the committed sample was recorded in: fixed, so the sample does not name a random temporary
// folder, and spelled out rather than built from tmpdir(), which is another folder wherever TMPDIR is set (every
// Mac). opencode's result titles in the sample are relative to it (`tmp/ada/todo-api/src/todos.js` below).
const projectParent = '/tmp/ada';
const project = `${projectParent}/todo-api`;

describe.runIf(process.env.OPENCODE_SAMPLES === 'regenerate')('regenerating the opencode samples', () => {
  it('records the scenario with the real binary and keeps a compact copy of its database', async () => {
    const recorded = await recordOpencodeSessions({ project });
    try {
      const work = mkdtempSync(join(tmpdir(), 'opencode-sample-'));
      const copy = join(work, 'opencode.db');
      copyFileSync(join(recorded.home.dataDir, 'opencode.db'), copy);
      const wal = join(recorded.home.dataDir, 'opencode.db-wal');
      if (existsSync(wal)) copyFileSync(wal, `${copy}-wal`);
      // Our copy, not opencode's: fold the -wal in and drop free pages so the sample stays small.
      const db = new Database(copy);
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.pragma('journal_mode = DELETE');
      db.exec('VACUUM');
      db.close();
      mkdirSync(samples, { recursive: true });
      copyFileSync(copy, sample);
      rmSync(work, { recursive: true, force: true });
      expect(statSync(sample).size).toBeLessThan(512 * 1024);
    } finally {
      recorded.home.remove();
      // The fixed project's parent, left empty.
      rmdirSync(projectParent, { maxRetries: 0 });
    }
  }, 300_000);
});

describe('the committed opencode sample (real opencode 1.18.33 output)', () => {
  let result: FileResult;
  let sessions: ParsedSession[] = [];
  let main: ParsedSession | undefined;
  let child: ParsedSession | undefined;
  let failing: ParsedSession | undefined;
  // Read when the suite starts, so a regeneration above runs first.
  beforeAll(() => {
    result = opencode.parseFile(sample);
    sessions = [...result.sessions];
    main = sessions.find((s) => s.title === titles.fix);
    child = sessions.find((s) => s.kind === 'subagent');
    failing = sessions.find((s) => s.title === titles.failing);
  });

  it('holds three sessions in the V1 tables, read with no warning', () => {
    expect(sessions).toHaveLength(3);
    expect(result.warnings).toEqual([]);
    expect(result.notes).toEqual([]);
    expect(main?.version).toBe('1.18.33');
    expect(main?.cwd).toBe(project);
  });

  it('has every tool the scenario called, and one failed read', () => {
    const calls = main?.messages.flatMap(toolCalls) ?? [];
    expect(calls.map((c) => c.name)).toEqual([
      'webfetch',
      'glob',
      'grep',
      'read',
      'read',
      'edit',
      'bash',
      'bash',
      'write',
      'task',
    ]);
    const errors = main?.messages.flatMap((m) =>
      m.parts.filter((p) => p.type === 'tool_result' && p.isError),
    );
    expect(errors).toHaveLength(1);
  });

  it("keeps opencode's title and metadata of each result, for a replay to give back", () => {
    const results = main?.messages.flatMap((m) => m.parts.filter((p) => p.type === 'tool_result')) ?? [];
    const done = results.filter((r) => r.type === 'tool_result' && !r.isError);
    expect(done.length).toBe(9);
    for (const result of done) expect(result.type === 'tool_result' && result.display?.title).toBeTruthy();
    const byName = (name: string) => done.find((r) => r.type === 'tool_result' && r.name === name);
    const read = byName('read');
    expect(read?.type === 'tool_result' && read.display?.title).toBe('tmp/ada/todo-api/src/todos.js');
    // The task's metadata names the sub-agent's session, as opencode's UI links it.
    const task = byName('task');
    expect(task?.type === 'tool_result' && task.display?.metadata?.sessionId).toBe(child?.sourceId);
  });

  it('links the sub-agent to the task call and splits three prompts into fourteen turns around a compaction', () => {
    const task = main?.messages.flatMap(toolCalls).find((c) => c.name === 'task');
    expect(child).toMatchObject({ parentId: main?.id, parentToolCallId: task?.id });
    expect(result.spawns).toEqual([
      { parentSourceId: main?.sourceId, childSourceId: child?.sourceId, toolCallId: task?.id },
    ]);
    const typed = main?.messages.filter((m) => m.role === 'user' && !m.injected) ?? [];
    expect(typed.map((m) => (m.parts[0] as { text: string }).text)).toEqual([
      prompts.fix,
      prompts.changelog,
      prompts.thanks,
    ]);
    const turns = splitTurns(main?.messages ?? []);
    expect(turns).toHaveLength(14);
    expect(turns[13]?.context[0]?.compaction).toBe(true);
    expect(failing?.messages.map((m) => [m.role, m.injected ?? false])).toEqual([
      ['user', false],
      ['assistant', true],
    ]);
  });
});
