import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { type ModelServer, type ScriptedReply, startModelServer } from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

let dir: ReturnType<typeof tempDir>;
let db: string;
let out: string;
let server: ModelServer | undefined;
const cwd = '/home/ada/app';

beforeEach(() => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  out = join(dir.path, 'pairs.jsonl');
  // The recording: the same file read twice (it changed in between), a grep, a command.
  writeTranscript(join(dir.path, 'session.jsonl'), {
    sessionId: 'ffffffff-0000-4000-8000-000000000001',
    cwd,
    prompt: 'What does the config say now?',
    steps: [
      { calls: [{ id: 't1', name: 'Read', input: { file_path: `${cwd}/config.json` }, result: 'v1' }] },
      {
        calls: [
          { id: 't2', name: 'Bash', input: { command: 'npm run bump', timeout: 120000 }, result: 'bumped' },
        ],
      },
      { calls: [{ id: 't3', name: 'Read', input: { file_path: `${cwd}/config.json` }, result: 'v2' }] },
      {
        calls: [
          { id: 't4', name: 'Grep', input: { pattern: 'version', path: `${cwd}/src` }, result: 'src/a.ts:1' },
        ],
      },
    ],
    answer: 'It says v2.',
  });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  dir.remove();
});

const free = (args: string[] = []) =>
  run([
    'replay',
    join(dir.path, 'session.jsonl'),
    '--mode',
    'free',
    '--model',
    'openai:scripted',
    '--base-url',
    server?.baseURL ?? '',
    '--db',
    db,
    '--out',
    out,
    '--json',
    ...args,
  ]);
const told = (index: number) =>
  (server?.chatRequests()[index]?.body?.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => m.content);
const call = (name: string, args: unknown): ScriptedReply => ({ toolCalls: [{ name, arguments: args }] });

describe('free mode', () => {
  it('hands the n-th identical call the n-th recorded result; a read-only repeat gets the last one again', async () => {
    server = await startModelServer({
      turns: [
        call('Read', { file_path: `${cwd}/config.json` }),
        call('Read', { file_path: `${cwd}/config.json` }),
        call('Read', { file_path: `${cwd}/config.json` }),
        { text: 'done' },
      ],
    });
    const result = await free();
    expect(result.exitCode).toBe(0);
    expect(told(3)).toEqual(['v1', 'v2', 'v2']);
    expect(JSON.parse(result.stdout)).toMatchObject({ misses: 0, turnsDone: 4 });
  });

  it('matches after normalisation: a relative path, extra whitespace, an argument at its default', async () => {
    server = await startModelServer({
      turns: [
        call('Read', { file_path: 'config.json' }),
        call('Bash', { command: '  npm   run bump ' }),
        call('Grep', { path: './src', pattern: 'version' }),
        { text: 'done' },
      ],
    });
    const result = await free();
    expect(result.exitCode).toBe(0);
    expect(told(3)).toEqual(['v1', 'bumped', 'src/a.ts:1']);
    expect(JSON.parse(result.stdout)).toMatchObject({ misses: 0 });
  });

  it('--on-miss error: tells the model the result is not in the recording, names the nearest calls, stores the miss', async () => {
    server = await startModelServer({
      turns: [call('Read', { file_path: `${cwd}/secrets.env` }), { text: 'cannot tell' }],
    });
    const result = await free();
    expect(result.exitCode).toBe(0);
    const [message] = told(1);
    expect(message).toContain(
      'this is a replay and the result of Read with these arguments is not in the recording',
    );
    expect(message).toContain(`Read({"file_path":"${cwd}/config.json"}) — differs in file_path`);
    expect(JSON.parse(result.stdout)).toMatchObject({ misses: 1, sessionsDiverged: 0, turnsDone: 2 });
    const handle = (await import('better-sqlite3')).default;
    const store = new handle(db, { readonly: true });
    const miss = store.prepare('SELECT * FROM run_misses').get() as {
      call: string;
      nearest: string;
      policy: string;
    };
    store.close();
    expect(JSON.parse(miss.call)).toEqual({ name: 'Read', input: { file_path: `${cwd}/secrets.env` } });
    expect(JSON.parse(miss.nearest)[0]).toMatchObject({ name: 'Read', differs: ['file_path'] });
    expect(miss.policy).toBe('error');
  });

  it('--on-miss stop: ends the session as diverged and asks nothing more', async () => {
    server = await startModelServer({
      turns: [call('Bash', { command: 'curl http://example.com' }), { text: 'never asked' }],
    });
    const result = await free(['--on-miss', 'stop']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ misses: 1, sessionsDiverged: 1, turnsDone: 1 });
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('gives the next original user message when the model ends its turn, and stops at the turn budget', async () => {
    server = await startModelServer({
      responders: [() => call('Read', { file_path: `${cwd}/config.json` })],
    });
    const result = await free(['--max-turns', '1']);
    expect(result.exitCode).toBe(0);
    // The original had 5 turns: a budget of 1× is 5 model calls.
    expect(server.chatRequests()).toHaveLength(5);
  });

  it('resumes after SIGKILL from the answers already written, asking only for the rest', async () => {
    const script = [
      call('Read', { file_path: `${cwd}/config.json` }),
      call('Bash', { command: 'npm run bump' }),
      call('Read', { file_path: `${cwd}/config.json` }),
      call('Grep', { pattern: 'version', path: `${cwd}/src` }),
      { text: 'It says v2.' },
    ];
    server = await startModelServer({
      responders: [
        (request) => ({
          ...(script[(request.messages ?? []).filter((m) => m.role === 'assistant').length] ?? { text: 'x' }),
          delayMs: 300,
        }),
      ],
    });
    const child = execa(
      process.execPath,
      [
        bin,
        'replay',
        join(dir.path, 'session.jsonl'),
        '--mode',
        'free',
        '--model',
        'openai:scripted',
        '--base-url',
        server.baseURL,
        '--db',
        db,
        '--out',
        out,
      ],
      { reject: false },
    );
    for (let i = 0; i < 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      if (lines() >= 2) break;
    }
    child.kill('SIGKILL');
    await child;
    const written = lines();
    expect(written).toBeGreaterThanOrEqual(2);
    expect(written).toBeLessThan(5);
    const id = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout)[0].id;
    const asked = server.chatRequests().length;
    const resumed = await run(['replay', '--resume', id, '--db', db, '--json']);
    expect(resumed.exitCode).toBe(0);
    const pairs = readFileSync(out, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(pairs.map((p) => p.turn)).toEqual([1, 2, 3, 4, 5]);
    // The conversation went on where it stopped: the last answer saw every recorded result in order.
    expect(
      pairs[4].messages
        .filter((m: { role: string }) => m.role === 'tool')
        .map((m: { content: string }) => m.content),
    ).toEqual(['v1', 'bumped', 'v2', 'src/a.ts:1']);
    expect(server.chatRequests().length - asked).toBe(5 - written);
  });
});

describe('the recorded provider replays every agent’s sessions faithfully', () => {
  it.each(['forced', 'free'])(
    '%s mode on Claude Code, opencode and Codex sessions: every completion equals its original',
    async (mode) => {
      const paths = ['sample-sessions', join('test', 'fixtures', 'codex', 'subagents')];
      const result = await run(['replay', ...paths, '--mode', mode, '--db', db, '--out', out, '--json']);
      expect(result.exitCode).toBe(0);
      const pairs = readFileSync(out, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(new Set(pairs.map((p) => p.agent))).toEqual(new Set(['claude-code', 'opencode', 'codex']));
      for (const pair of pairs)
        expect({ turn: pair.turn, completion: pair.completion }).toEqual({
          turn: pair.turn,
          completion: pair.original,
        });
      const report = JSON.parse(result.stdout);
      expect(report.matches.differs).toBe(0);
      expect(report.recall).toBe(1);
    },
  );
});

const lines = (): number => {
  try {
    return readFileSync(out, 'utf8').split('\n').length - 1;
  } catch {
    return 0;
  }
};
void root;
