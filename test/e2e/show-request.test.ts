import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// `show --turn N` gives the request the model received where the transcript recorded it (Claude Code 2.1.328),
// and says what it could not rebuild where it did not: the same session with its request records taken out
// stands for an older transcript that has only the rendered attachments, and sample-sessions for one without
// either.

const fixture = join(root, 'test', 'fixtures', 'real', 'claude-code-2.1.328');
const slug = '-home-ada-projects-demo-app';
const session = '5d5d5d5d-0004-4000-8000-00000000000d';

let dir: ReturnType<typeof tempDir>;
let db: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const projects = join(dir.path, 'projects');
  cpSync(join(fixture, 'projects'), projects, { recursive: true });
  // The older copy: same lines but the request records, under another session id.
  const older = join(dir.path, 'older', slug);
  mkdirSync(older, { recursive: true });
  const lines = readFileSync(join(projects, slug, `${session}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.includes('"type":"api-request'))
    .map((line) => line.replaceAll(session, '0ddc0ddc-0004-4000-8000-00000000000d'));
  writeFileSync(join(older, '0ddc0ddc-0004-4000-8000-00000000000d.jsonl'), `${lines.join('\n')}\n`);
  for (const path of [projects, join(dir.path, 'older'), join(root, 'sample-sessions')]) {
    const ingest = await run(['ingest', path, '--db', db]);
    expect(ingest.exitCode, ingest.stderr).toBe(0);
  }
});
afterAll(() => dir.remove());

interface Shown {
  turn: number;
  fidelity: { rebuilt: string; tail?: { messages: number; matching: number }; notRebuilt: string[] };
  request: null | {
    system: { text: string }[];
    tools: { name: string }[];
    messages: { role: string; by: string; injectedBlocks?: number[] }[];
    params: { model?: string };
  };
}

const turnJson = async (prefix: string, n: number): Promise<Shown> => {
  const result = await run(['show', prefix, '--turn', String(n), '--db', db, '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Shown;
};

describe('show --turn: the request the model received', () => {
  it('with request records: the system blocks, tools and messages, each message marked by who wrote it', async () => {
    const shown = await turnJson('5d5d5d5d', 3);
    expect(shown.turn).toBe(3);
    expect(shown.fidelity.rebuilt).toBe('exact');
    expect(shown.fidelity.tail).toEqual({ messages: 6, matching: 6 });
    expect(shown.fidelity.notRebuilt).toEqual([]);
    const request = shown.request;
    expect(request?.params.model).toBe('claude-opus-5-5');
    expect(request?.system.map((block) => block.text.slice(0, 30))).toEqual([
      'You are a Claude agent, built ',
      '\nYou are an agent working with',
    ]);
    expect(request?.tools.map((tool) => tool.name)).toEqual([
      'Agent',
      'Bash',
      'Edit',
      'Glob',
      'Grep',
      'Read',
      'TodoWrite',
      'WebFetch',
      'DeferredToolPlaceholder',
      'Write',
    ]);
    // The prompt with its reminders, the harness's system message, the Agent call and its result, the answer,
    // and the background task's notification (harness text only).
    expect(request?.messages.map((m) => `${m.role}:${m.by}`)).toEqual([
      'user:user',
      'system:harness',
      'assistant:model',
      'user:tools',
      'assistant:model',
      'user:harness',
    ]);

    const text = await run(['show', '5d5d5d5d', '--turn', '3', '--db', db]);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain('── request for claude-opus-5-5 (exact');
    expect(text.stdout).toContain(
      '── tools (10): Agent, Bash, Edit, Glob, Grep, Read, TodoWrite, WebFetch, DeferredToolPlaceholder, Write',
    );
    expect(text.stdout).toContain('── user · typed by the user, 2 block(s) injected by the harness');
    expect(text.stdout).toContain('[SYSTEM NOTIFICATION - NOT USER INPUT]');
    expect(text.stdout).toContain('── turn 3: the model answered ──');
    expect(text.stdout).not.toContain('not known:');
  });

  it('without request records but with rendered attachments: they are in the context, the rest is listed', async () => {
    const shown = await turnJson('0ddc0ddc', 1);
    expect(shown.request).toBeNull();
    expect(shown.fidelity.rebuilt).toBe('attachments');
    expect(shown.fidelity.notRebuilt).toContain('the system prompt');
    expect(shown.fidelity.notRebuilt).toContain('the tool definitions');
    const text = await run(['show', '0ddc0ddc', '--turn', '1', '--db', db]);
    expect(text.stdout).toContain('── system (injected, environment attachment)');
    expect(text.stdout).toMatch(/not known: the system prompt; the tool definitions/);
  });

  it('with neither: the conversation only, and the harness text is named as missing', async () => {
    const shown = await turnJson('9a8b7c6d', 1);
    expect(shown.request).toBeNull();
    expect(shown.fidelity.rebuilt).toBe('conversation');
    expect(shown.fidelity.notRebuilt.at(-1)).toMatch(/^harness text the log does not hold/);
  });
});
