import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PathSummary } from '../../src/sources/ingest.js';
import { root, run, tempDir } from '../helpers/cli.js';

// What the ingest summary says must be what happened: sessions in files skipped as unchanged are counted as
// unchanged, messages count what this ingest added, and every ignored file can be named.

const project = join('claude-code', '-home-ada-todo-api');
const fixName = '6f1c2a34-7b1d-4c55-9d0e-2a8b3c4d5e61.jsonl';

let dir: ReturnType<typeof tempDir>;
let db: string;
let logs: string;
beforeEach(() => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  logs = join(dir.path, 'sample-sessions');
  cpSync(join(root, 'sample-sessions'), logs, { recursive: true });
});
afterEach(() => dir.remove());

const ingest = (...args: string[]) => run(['ingest', ...args, '--db', db]);
const ingestJson = async (...args: string[]): Promise<PathSummary> => {
  const result = await ingest(...args, '--json');
  expect(result.exitCode, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { paths: PathSummary[] }).paths[0] as PathSummary;
};
/** What the store holds, as `sessions --json` reports it. */
const stored = async () =>
  JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
    sourceId: string;
    messages: number;
    toolCalls: number;
  }[];

/** A Claude Code log line continuing the sample fix session, after its last line. */
const line = (type: 'user' | 'assistant', uuid: string, parentUuid: string, message: object) =>
  `${JSON.stringify({
    parentUuid,
    isSidechain: false,
    userType: 'external',
    cwd: '/home/ada/todo-api',
    sessionId: fixName.replace('.jsonl', ''),
    version: '2.1.52',
    type,
    uuid,
    timestamp: '2026-05-04T09:05:00.000Z',
    message,
  })}\n`;
const lastUuid = (file: string): string =>
  JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string).uuid;

describe('ingest summary', () => {
  it('counts the sessions of files skipped as unchanged as unchanged, in words and in --json', async () => {
    const first = await ingest(logs);
    expect(first.exitCode).toBe(0);
    const sessions = (await stored()).length;
    expect(sessions).toBe(6);
    expect(first.stdout).toContain(`sessions ${sessions} new, 0 updated, 0 unchanged`);

    const again = await ingest(logs);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain(`sessions 0 new, 0 updated, ${sessions} unchanged`);
    expect(again.stdout).toContain('added 0 messages, 0 tool calls');
    expect(again.stdout).toContain('files 0 read, 4 unchanged');
    const json = await ingestJson(logs);
    expect(json.files).toMatchObject({ read: 0, unchanged: 4 });
    expect(json.sessions).toEqual({ new: 0, updated: 0, unchanged: sessions });
  });

  it('counts only what a log that grew added: one more line is one message', async () => {
    const live = join(dir.path, 'live');
    cpSync(join(logs, project, fixName), join(live, fixName));
    const file = join(live, fixName);
    const before = await ingestJson(live);
    const [session] = await stored();
    expect(before.messages).toBe(session?.messages);
    expect(before.messages).toBeGreaterThan(1);

    appendFileSync(
      file,
      line('user', '0a000000-0000-4000-8000-000000000001', lastUuid(file), {
        role: 'user',
        content: 'Thanks. Now add a test for limit=0.',
      }),
    );
    const grown = await ingest(live);
    expect(grown.exitCode, grown.stderr).toBe(0);
    expect(grown.stdout).toContain('sessions 0 new, 1 updated, 0 unchanged');
    expect(grown.stdout).toContain('added 1 message, 0 tool calls');
    // Only the new line was read, and the summary says so.
    expect(grown.stdout).toContain('files 1 read (1 only from where the last ingest stopped)');
    // The store now holds exactly one more message than before.
    expect((await stored())[0]?.messages).toBe((session?.messages ?? 0) + 1);

    appendFileSync(
      file,
      line('assistant', '0a000000-0000-4000-8000-000000000002', lastUuid(file), {
        model: 'claude-sonnet-4-5-20250929',
        id: 'msg_01Grown',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading the tests first.' },
          { type: 'tool_use', id: 'toolu_01Grown', name: 'Read', input: { file_path: 'test/todos.test.js' } },
        ],
      }),
    );
    const json = await ingestJson(live);
    expect(json.sessions).toEqual({ new: 0, updated: 1, unchanged: 0 });
    expect(json).toMatchObject({ messages: 1, toolCalls: 1, rewritten: { messages: 0, toolCalls: 0 } });
    expect(json.files).toMatchObject({ read: 1, continued: 1 });
    expect((await stored())[0]).toMatchObject({
      messages: (session?.messages ?? 0) + 2,
      toolCalls: (session?.toolCalls ?? 0) + 1,
    });
  });

  it('says a session whose earlier messages changed was rewritten, not that its messages were added', async () => {
    const live = join(dir.path, 'live');
    cpSync(join(logs, project, fixName), join(live, fixName));
    const file = join(live, fixName);
    await ingestJson(live);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('Find the bug and fix it', 'Find the bug and fix it quickly'),
    );
    const result = await ingest(live);
    expect(result.exitCode).toBe(0);
    const [session] = await stored();
    expect(result.stdout).toContain('added 0 messages, 0 tool calls');
    expect(result.stdout).toContain(
      `rewrote ${session?.messages} messages, ${session?.toolCalls} tool calls (their earlier messages changed)`,
    );
  });

  it('names each ignored file with its reason: with --verbose on stderr, always in --json', async () => {
    writeFileSync(join(logs, 'empty.jsonl'), '');
    const plain = await ingest(logs);
    expect(plain.stdout).toContain('3 ignored (--verbose names them)');
    expect(plain.stderr).toBe('');

    const json = await ingestJson(logs);
    const meta = join(
      logs,
      project,
      '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      'subagents',
      'agent-b51e7a2.meta.json',
    );
    expect(json.files.ignored).toBe(3);
    expect(json.ignored).toEqual([
      { file: join(logs, 'README.md'), reason: 'not a session log of any supported agent' },
      { file: join(logs, 'empty.jsonl'), reason: 'empty file' },
      // Sub-agent files come after the main transcripts.
      { file: meta, reason: 'not a session log of any supported agent' },
    ]);

    const verbose = await ingest(logs, '--verbose');
    expect(verbose.exitCode).toBe(0);
    expect(verbose.stdout).toContain('3 ignored ·');
    expect(verbose.stdout).not.toContain('--verbose names them');
    expect(verbose.stderr.split('\n').filter(Boolean).sort()).toEqual(
      [
        `ignored: ${join(logs, 'README.md')}: not a session log of any supported agent`,
        `ignored: ${meta}: not a session log of any supported agent`,
        `ignored: ${join(logs, 'empty.jsonl')}: empty file`,
      ].sort(),
    );
  });

  it('explains --verbose in --help with an example', async () => {
    const help = await run(['ingest', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/--verbose\s+name every ignored file/);
    expect(help.stdout).toContain('$ replay-history ingest sample-sessions --verbose');
  });
});
