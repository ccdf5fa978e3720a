import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, tempDir } from '../helpers/cli.js';
import { type ModelServer, type ScriptedReply, startModelServer } from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

// A recorded session whose tool calls would delete a file, write a file and call the network. Replayed with a
// model stand-in that asks for exactly those calls, in both modes, nothing may happen.
let dir: ReturnType<typeof tempDir>;
let victim: string;
let created: string;
let hits = 0;
let listener: Server;
let url: string;
let before: { content: string; mtimeMs: number; ino: number };

beforeAll(async () => {
  dir = tempDir();
  victim = join(dir.path, 'victim.txt');
  created = join(dir.path, 'created.txt');
  writeFileSync(victim, 'keep me\n');
  const stat = statSync(victim);
  before = { content: 'keep me\n', mtimeMs: stat.mtimeMs, ino: stat.ino };
  listener = createServer((_req, res) => {
    hits++;
    res.end('exfiltrated');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/exfil`;
  writeTranscript(join(dir.path, 'dangerous.jsonl'), {
    sessionId: 'dddddddd-0000-4000-8000-000000000001',
    cwd: dir.path,
    prompt: 'Clean up the workspace and report home.',
    steps: [
      { calls: [{ id: 'toolu_rm', name: 'Bash', input: { command: `rm -f ${victim}` }, result: '' }] },
      {
        calls: [
          {
            id: 'toolu_write',
            name: 'Write',
            input: { file_path: created, content: 'pwned' },
            result: `File created successfully at: ${created}`,
          },
        ],
      },
      { calls: [{ id: 'toolu_curl', name: 'Bash', input: { command: `curl -s ${url}` }, result: 'ok' }] },
    ],
    answer: 'Cleaned up.',
  });
});

afterAll(async () => {
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  dir.remove();
});

const untouched = () => {
  expect(existsSync(victim)).toBe(true);
  const stat = statSync(victim);
  expect({ content: readFileSync(victim, 'utf8'), mtimeMs: stat.mtimeMs, ino: stat.ino }).toEqual(before);
  expect(existsSync(created)).toBe(false);
  expect(hits).toBe(0);
};

const dangerous = (): ScriptedReply[] => [
  { toolCalls: [{ id: 'm_rm', name: 'Bash', arguments: { command: `rm -f ${victim}` } }] },
  { toolCalls: [{ id: 'm_write', name: 'Write', arguments: { file_path: created, content: 'pwned' } }] },
  { toolCalls: [{ id: 'm_curl', name: 'Bash', arguments: { command: `curl -s ${url}` } }] },
  { text: 'Cleaned up.' },
];

async function replay(mode: 'forced' | 'free', server: ModelServer, out: string) {
  return run([
    'replay',
    join(dir.path, 'dangerous.jsonl'),
    '--mode',
    mode,
    '--model',
    'openai:scripted',
    '--base-url',
    server.baseURL,
    '--db',
    join(dir.path, 'replay.db'),
    '--out',
    out,
    '--force',
    '--json',
  ]);
}

describe('a replay never executes a recorded tool', () => {
  it('forced mode: the model asks for rm, a write and curl at every turn; nothing happens', async () => {
    const server = await startModelServer({ responders: [(_request, index) => dangerous()[index % 3]] });
    try {
      const result = await replay('forced', server, join(dir.path, 'forced.jsonl'));
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ turnsDone: 4, turnsFailed: 0 });
      // The checker watched the recorded cwd (which holds the victim) for the whole run and found nothing.
      expect(JSON.parse(result.stdout).sideEffects).toMatchObject({
        checked: true,
        roots: [dir.path],
        changes: [],
      });
      expect(server.chatRequests()).toHaveLength(4);
    } finally {
      await server.close();
    }
    untouched();
  });

  it('free mode: each call is answered with the recorded result; nothing happens', async () => {
    const server = await startModelServer({ turns: dangerous() });
    try {
      const out = join(dir.path, 'free.jsonl');
      const result = await replay('free', server, out);
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        turnsDone: 4,
        misses: 0,
        matches: { exact: 3, none: 1 },
        sideEffects: { checked: true, roots: [dir.path], changes: [] },
      });
      // What the model was told each call returned: the recording, not anything this machine did.
      const last = server.chatRequests()[3]?.body?.messages ?? [];
      const results = last.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(results).toEqual(['', `File created successfully at: ${created}`, 'ok']);
    } finally {
      await server.close();
    }
    untouched();
  });
});
