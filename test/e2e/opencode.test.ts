// End to end on real data: the real opencode binary (npm opencode-ai, pinned) records sessions against the
// scripted model server, then our binary ingests its data dir and lists and shows what it stored.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message, Part } from '../../src/model/session.js';
import { run, tempDir } from '../helpers/cli.js';
import {
  prompts,
  type Recorded,
  recordOpencodeSessions,
  summary,
  titles,
} from '../helpers/opencode-scenario.js';

let recorded: Recorded;
let dir: ReturnType<typeof tempDir>;
let db: string;
let ingested: {
  paths: { files: Record<string, number>; sessions: Record<string, number>; warnings: unknown[] }[];
};
let before: Map<string, string>;

/** Every file of the data dir with its content hash, size and mtime: what must not change. */
function manifest(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (path: string): void => {
    for (const name of readdirSync(path)) {
      const entry = join(path, name);
      const stat = statSync(entry);
      if (stat.isDirectory()) walk(entry);
      else
        out.set(
          entry,
          `${createHash('sha256').update(readFileSync(entry)).digest('hex')} ${stat.size} ${stat.mtimeMs}`,
        );
    }
  };
  walk(root);
  return out;
}

beforeAll(async () => {
  recorded = await recordOpencodeSessions();
  dir = tempDir('opencode-e2e-');
  db = join(dir.path, 'replay.db');
  before = manifest(recorded.home.dataDir);
  const result = await run(['ingest', recorded.home.dataDir, '--db', db, '--json']);
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  ingested = JSON.parse(result.stdout);
}, 300_000);

afterAll(() => {
  recorded?.home.remove();
  dir?.remove();
});

const show = async (args: string[]) => {
  const result = await run(['show', ...args, '--db', db, '--json']);
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout);
};
const calls = (messages: Message[]) =>
  messages.flatMap((m) =>
    m.parts.filter((p): p is Extract<Part, { type: 'tool_call' }> => p.type === 'tool_call'),
  );
const results = (messages: Message[]) =>
  messages.flatMap((m) =>
    m.parts.filter((p): p is Extract<Part, { type: 'tool_result' }> => p.type === 'tool_result'),
  );

describe('opencode end to end (real binary, scripted model)', () => {
  it('the binary wrote opencode.db (V1 tables, WAL) and our ingest read it in one unit, leaving it untouched', () => {
    expect(readdirSync(recorded.home.dataDir)).toContain('opencode.db');
    expect(ingested.paths[0]?.warnings).toEqual([]);
    expect(ingested.paths[0]?.files.read).toBe(1);
    expect(ingested.paths[0]?.sessions).toEqual({ new: 3, updated: 0, unchanged: 0 });
    expect(manifest(recorded.home.dataDir)).toEqual(before);
  });

  it('lists the sessions: the bug fix, its sub-agent linked to the task call, and the failed one', async () => {
    const listed = await run(['sessions', '--agent', 'opencode', '--json', '--db', db]);
    expect(listed.exitCode).toBe(0);
    const sessions = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(sessions).toHaveLength(3);
    const main = sessions.find((s) => s.sourceId === recorded.mainId);
    expect(main).toMatchObject({
      agent: 'opencode',
      kind: 'main',
      title: titles.fix,
      cwd: recorded.home.project,
      version: '1.18.33',
      // 8 steps for the first prompt, 3 after the second (sub-agent steps are its own), the summary, 2 after it
      turns: 14,
      toolCalls: 10,
      unansweredToolCalls: 0,
    });
    const child = sessions.find((s) => s.kind === 'subagent');
    expect(child).toMatchObject({
      parentId: main?.id,
      title: 'Check limit tests (@general subagent)',
      turns: 2,
      toolCalls: 1,
    });
    const task = calls((await show([String(main?.id)])).messages).find((c) => c.name === 'task');
    expect(child?.spawnedBy).toBe(task?.id);
    const failing = sessions.find((s) => s.sourceId === recorded.failingId);
    expect(failing).toMatchObject({ kind: 'main', title: titles.failing, turns: 0, toolCalls: 0 });
  });

  it('keeps every tool call with its recorded result, the failed read as an error', async () => {
    const session = await show([recorded.mainId]);
    const messages = session.messages as Message[];
    expect(calls(messages).map((c) => c.name)).toEqual([
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
    const byName = new Map(results(messages).map((r) => [`${r.name}:${r.isError}`, r]));
    expect(results(messages)).toHaveLength(10);
    // The bug report page, fetched from 127.0.0.1 and converted to markdown by opencode.
    expect(String(byName.get('webfetch:false')?.output)).toContain('# limit returns one item too few');
    expect(String(byName.get('read:true')?.output)).toMatch(/^File not found: .*src\/routes\.js$/);
    // Two bash calls, answered in order: the test run, then `rm debug.log`, which prints nothing.
    const bash = results(messages).filter((r) => r.name === 'bash');
    expect(bash.map((r) => [String(r.output), r.isError])).toEqual([
      ['ok: list(5) has 5 items\n', false],
      ['(no output)', false],
    ]);
    expect(String(byName.get('grep:false')?.output)).toContain('Found 2 matches');
    expect(String(byName.get('glob:false')?.output)).toContain('src/todos.js');
    expect(String(byName.get('edit:false')?.output)).toBe('Edit applied successfully.');
    expect(String(byName.get('task:false')?.output)).toContain(
      'Yes: test.js asserts that list(5) returns 5 items.',
    );
    // The steps' text, reasoning and usage came through: the first step (webfetch) has no reasoning, the second
    // (glob + grep) starts with it.
    const [first, second] = messages.filter((m) => m.role === 'assistant');
    expect(first?.parts[0]).toEqual({ type: 'text', text: 'Let me read the bug report first.' });
    expect(first?.usage?.inputTokens).toBeGreaterThan(0);
    expect(second?.parts[0]).toEqual({
      type: 'reasoning',
      text: 'The limit handling must be in the route code. Let me find it.',
    });
    expect(second?.usage?.inputTokens).toBeGreaterThan(0);
  });

  it('keeps the multi-turn structure: three prompts, the compaction, and what the model saw after it', async () => {
    const session = await show([recorded.mainId]);
    const messages = session.messages as Message[];
    const typed = messages
      .filter((m) => m.role === 'user' && !m.injected)
      .map((m) => (m.parts[0] as { text: string }).text);
    expect(typed).toEqual([prompts.fix, prompts.changelog, prompts.thanks]);
    const compaction = messages.find((m) => m.compaction);
    expect(compaction).toMatchObject({ role: 'assistant', parts: [{ type: 'text', text: summary }] });
    // The last turn (14 of 14, after "Thanks!") was given the summary, opencode's "Continue" prompt, its answer and the
    // question — exactly what opencode sent (the scripted server recorded it), less its "What did we do so far?".
    const last = await show([recorded.mainId, '--turn', '14']);
    const context = last.context as Message[];
    expect(context.map((m) => [m.role, (m.parts[0] as { text?: string }).text])).toEqual([
      ['assistant', summary],
      [
        'user',
        'Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.',
      ],
      ['assistant', 'Nothing left to do.'],
      ['user', prompts.thanks],
    ]);
    const asked = recorded.requests.find((r) => r.body?.messages?.at(-1)?.content === prompts.thanks);
    const sent = asked?.body?.messages ?? [];
    expect(sent.slice(1).map((m) => [m.role, m.content])).toEqual([
      ['user', 'What did we do so far?'],
      ...context.map((m) => [m.role, (m.parts[0] as { text?: string }).text]),
    ]);
  });

  it('marks the failed model call as not a model turn', async () => {
    const session = await show([recorded.failingId]);
    const assistant = (session.messages as Message[]).find((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({
      injected: true,
      parts: [
        { type: 'text', text: expect.stringMatching(/^APIError: scripted model: this request is refused/) },
      ],
    });
  });

  it('re-ingesting the unchanged data dir reads nothing', async () => {
    const again = await run(['ingest', recorded.home.dataDir, '--db', db, '--json']);
    expect(JSON.parse(again.stdout).paths[0].files).toMatchObject({ read: 0, unchanged: 1 });
  });

  it('reads the JSON `opencode export` printed as a copy: the database already holds it, so nothing changes', async () => {
    const exported = JSON.parse(recorded.exported);
    expect(exported.info.id).toBe(recorded.mainId);
    const file = join(dir.path, 'export.json');
    writeFileSync(file, recorded.exported);
    const result = await run(['ingest', file, '--db', db, '--json']);
    expect(result.exitCode).toBe(0);
    const path = JSON.parse(result.stdout).paths[0];
    expect(path.files.read).toBe(1);
    expect(path.sessions).toEqual({ new: 0, updated: 0, unchanged: 0 });
    expect(path.messages).toBe(0);
  });
});
