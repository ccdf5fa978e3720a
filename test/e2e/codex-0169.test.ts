// The real Codex 0.169 rollouts through the CLI: `show` says what a compaction left the model, and a fork
// names the session it continues.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/model/canonical-json.js';
import { root, run, tempDir } from '../helpers/cli.js';
import { startModelServer } from '../helpers/model-server.js';

const sessions = join(root, 'test/fixtures/real/codex-0.169.0/sessions');
let dir: ReturnType<typeof tempDir>;
let db: string;

beforeAll(async () => {
  dir = tempDir('codex-0169-');
  db = join(dir.path, 'store.db');
  expect((await run(['ingest', sessions, '--db', db])).exitCode).toBe(0);
});
afterAll(() => dir.remove());

/** `replay` of the main thread with the scripted server as `responses:scripted`. */
const replayResponses = (baseURL: string, out: string, ...extra: string[]) =>
  run([
    'replay',
    '01a23320-421e',
    '--db',
    db,
    '--model',
    'responses:scripted',
    '--base-url',
    baseURL,
    '--out',
    out,
    ...extra,
  ]);

describe('show on Codex 0.169 rollouts', () => {
  it('says the model kept five earlier messages with the compaction summary, not that it saw nothing', async () => {
    const shown = await run(['show', '01a23320-421e', '--db', db]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      '[from here on the model saw only this summary and the 5 earlier message(s) it kept, then what follows]',
    );
    expect(shown.stdout).not.toContain('[the model saw nothing before this summary]');
  });

  it('shows a fork as the continuation of the session it was forked from', async () => {
    const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
      id: string;
      sourceId: string;
      continues: { sessionId: string; line?: number } | null;
    }[];
    const parent = listed.find((s) => s.sourceId === '01a23320-421e-78b0-966b-1e7637ec5e5c');
    const fork = listed.find((s) => s.sourceId === '01a23320-66b5-76d1-afb1-947b8c426391');
    expect(fork?.continues).toMatchObject({ sessionId: parent?.id, line: 122 });
    const shown = await run(['show', '01a23320-66b5', '--db', db]);
    expect(shown.stdout).toContain(`continues session ${parent?.id.slice(0, 12)}`);
    expect(shown.stdout).toContain('Forked: list the files');
  });

  it('replays with the tools Codex 0.169 offered, and each pair names that list', async () => {
    const out = join(dir.path, 'pairs.jsonl');
    const replay = await run(['replay', '01a23320-421e', '--db', db, '--out', out, '--json']);
    expect(replay.exitCode, replay.stderr).toBe(0);
    const pairs = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            sources: { tool_list?: string };
            tools: { function: { name: string } }[];
            messages: { tool_calls?: { function: { name: string; arguments: string } }[] }[];
            completion: { tool_calls?: { function: { name: string; arguments: string } }[] };
            wire: { api: string; source: string; body: { input: Record<string, unknown>[] } };
          },
      );
    expect(pairs).toHaveLength(14);
    for (const pair of pairs) {
      expect(pair.sources.tool_list).toBe('codex/0.169');
      // Its 11 tools, then the two multi-agent tools it reached through tool_search.
      expect(pair.tools.map((tool) => tool.function.name)).toEqual([
        'exec_command',
        'write_stdin',
        'update_plan',
        'request_user_input',
        'apply_patch',
        'view_image',
        'get_goal',
        'create_goal',
        'update_goal',
        'tool_search',
        'web_search',
        'spawn_agent',
        'wait_agent',
      ]);
    }

    // Each pair also holds its request on the Responses wire, equal to what Codex sent item for item (but for
    // the item ids and statuses it adds): the 14 turn requests of the thread, in order.
    const sent = readFileSync(join(root, 'test/fixtures/real/codex-0.169.0/requests-main.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { step: string; headers: Record<string, string>; body_raw: string })
      .filter((request) => /^[abc]\d$/.test(request.step))
      .map((request) => (JSON.parse(request.body_raw) as { input: Record<string, unknown>[] }).input);
    expect(sent).toHaveLength(14);
    for (const [index, pair] of pairs.entries()) {
      expect(pair.wire).toMatchObject({ api: 'openai-responses', source: 'conversation' });
      expect(pair.wire.body.input).toEqual(sent[index]?.map(({ id: _id, status: _status, ...item }) => item));
    }

    // apply_patch, a free-form tool, is called in the function form it is offered in: {input: "<patch>"}.
    // Turn 7 (the last before the compaction) saw the first two and made the third.
    const seventh = pairs[6];
    const patchCalls = [...(seventh?.messages ?? []), seventh?.completion ?? {}]
      .flatMap((message) => message.tool_calls ?? [])
      .filter((call) => call.function.name === 'apply_patch');
    expect(patchCalls).toHaveLength(3);
    for (const call of patchCalls)
      expect(JSON.parse(call.function.arguments)).toEqual({
        input: expect.stringMatching(/^\*\*\* Begin Patch\n/),
      });
  });

  it('free mode: every recorded call answers the model’s, apply_patch’s included', async () => {
    const out = join(dir.path, 'free.jsonl');
    const replay = await run([
      'replay',
      '01a23320-421e',
      '--db',
      db,
      '--mode',
      'free',
      '--out',
      out,
      '--json',
    ]);
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ misses: 0, turnsFailed: 0 });
  });

  it('responses:MODEL sends each turn’s recorded Responses input as Codex did, streamed or not, and reads the answer', async () => {
    const sent = readFileSync(join(root, 'test/fixtures/real/codex-0.169.0/requests-main.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { step: string; body_raw: string })
      .filter((request) => /^[abc]\d$/.test(request.step))
      .map((request) => (JSON.parse(request.body_raw) as { input: Record<string, unknown>[] }).input);
    for (const stream of [false, true]) {
      const server = await startModelServer();
      try {
        // Every answer the same, so the order turns are asked in does not matter.
        server.push(
          ...Array.from({ length: 14 }, () => ({
            text: 'Looking.',
            reasoning: 'first the file',
            toolCalls: [{ name: 'exec_command', arguments: { cmd: 'cat hello.py' } }],
          })),
        );
        const out = join(dir.path, `responses-${stream}.jsonl`);
        const replay = await replayResponses(server.baseURL, out, '--json', ...(stream ? ['--stream'] : []));
        expect(replay.exitCode, replay.stderr).toBe(0);
        const asked = server.chatRequests();
        expect(asked.map((request) => request.path)).toEqual(Array(14).fill('/v1/responses'));
        // Turns are asked several at a time: the same 14 bodies (key order aside), in whatever order they came.
        const bodies = (list: unknown[]) => list.map((input) => canonicalJson(input)).sort();
        expect(bodies(asked.map((request) => request.body?.input))).toEqual(
          bodies(sent.map((input) => input.map(({ id: _id, status: _status, ...item }) => item))),
        );
        for (const request of asked) expect(request.body?.stream ?? false).toBe(stream);
        const first = JSON.parse(readFileSync(out, 'utf8').split('\n')[0] as string) as {
          completion: { content: string; reasoning_content?: string; tool_calls: { function: unknown }[] };
        };
        expect(first.completion).toMatchObject({
          content: 'Looking.',
          reasoning_content: 'first the file',
          tool_calls: [{ function: { name: 'exec_command', arguments: '{"cmd":"cat hello.py"}' } }],
        });
      } finally {
        await server.close();
      }
    }
  });

  it('responses:MODEL says what failed: a 401 stops the run at the first turn, saying so', async () => {
    const server = await startModelServer();
    try {
      server.push({ error: { status: 401, message: 'bad key' } });
      const replay = await replayResponses(server.baseURL, join(dir.path, 'r401.jsonl'), '--retries', '0');
      expect(replay.exitCode).not.toBe(0);
      expect(replay.stderr).toContain('responses:scripted: authentication failed (401)');
    } finally {
      await server.close();
    }
  });
});
