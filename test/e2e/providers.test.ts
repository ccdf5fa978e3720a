import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, tempDir } from '../helpers/cli.js';
import { contentText, type ModelServer, startModelServer } from '../helpers/model-server.js';

// Each provider against the scripted server over its real wire protocol, on the bug-fix sample session
// (5 turns: Read+Grep in parallel, a failing Bash run, an Edit, a passing run, an answer).
const session = '6f1c2a34';
let dir: ReturnType<typeof tempDir>;
let db: string;
let server: ModelServer | undefined;

beforeAll(async () => {
  const setup = tempDir();
  // One store with the samples, copied per test: ingest once.
  db = join(setup.path, 'replay.db');
  expect((await run(['ingest', 'sample-sessions', '--db', db])).exitCode).toBe(0);
});
beforeEach(() => {
  dir = tempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  dir.remove();
});

const replay = (args: string[], env: Record<string, string> = {}) =>
  run(['replay', session, '--db', db, '--out', join(dir.path, 'pairs.jsonl'), '--force', '--json', ...args], {
    env,
  });
const pairs = () =>
  readFileSync(join(dir.path, 'pairs.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));

describe.each([false, true])('openai-compatible provider (stream: %s)', (stream) => {
  it('sends each turn its original context with the recorded tool results in place, and reads tool calls back', async () => {
    server = await startModelServer({
      responders: [
        (_request, index) =>
          index === 0
            ? {
                toolCalls: [{ id: 'r1', name: 'Read', arguments: { file_path: 'src/todos.js' } }],
                usage: { promptTokens: 100, completionTokens: 7 },
              }
            : { text: 'ok', reasoning: 'thinking it over' },
      ],
    });
    const result = await replay([
      '--model',
      'openai:qwen',
      '--base-url',
      server.baseURL,
      '--concurrency',
      '1',
      ...(stream ? ['--stream'] : []),
    ]);
    expect(result.exitCode).toBe(0);
    const requests = server.chatRequests();
    expect(requests).toHaveLength(5);
    expect(requests.every((r) => r.path === '/v1/chat/completions' && r.body?.model === 'qwen')).toBe(true);
    expect(requests.every((r) => (r.body?.stream === true) === stream)).toBe(true);
    // Turn 3 (after the failing run) saw the recorded test failure as the result of the recorded Bash call.
    const third = requests[2]?.body?.messages ?? [];
    const failure = third.findIndex(
      (m) => m.role === 'tool' && contentText(m.content).includes('Expected length: 5'),
    );
    expect(failure).toBeGreaterThan(0);
    expect(third[failure - 1]?.tool_calls?.[0]?.function.name).toBe('Bash');
    expect(third[failure]?.tool_call_id).toBe(third[failure - 1]?.tool_calls?.[0]?.id);
    expect(requests[0]?.body?.tools?.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(['Read', 'Bash', 'Edit']),
    );
    const [first, second] = pairs();
    expect(first.completion.tool_calls).toEqual([
      { id: 'r1', type: 'function', function: { name: 'Read', arguments: '{"file_path":"src/todos.js"}' } },
    ]);
    // The original's first turn read the file by its absolute path (and grepped too): not the same calls.
    expect(first.match.tool_calls).toBe('differs');
    expect(first.usage).toEqual({ prompt_tokens: 100, completion_tokens: 7 });
    expect(second.completion).toEqual({
      role: 'assistant',
      content: 'ok',
      reasoning_content: 'thinking it over',
    });
    // Each body is the request the pair holds, serialised as the SDK serialises it (the non-streamed body is
    // made from JSON the replay already had), sent as JSON.
    const sent = pairs().map((pair) =>
      JSON.stringify({
        model: 'qwen',
        messages: pair.messages,
        tools: pair.tools,
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
      }),
    );
    expect(requests.map((r) => r.raw)).toEqual(sent);
    expect(requests.every((r) => r.headers['content-type'] === 'application/json')).toBe(true);
  });
});

describe.each([false, true])('anthropic provider (stream: %s)', (stream) => {
  it('speaks the Messages API: system apart, tool_result blocks after tool_use, tool calls read back', async () => {
    server = await startModelServer({
      responders: [
        () => ({
          text: 'Checking.',
          toolCalls: [{ id: 'toolu_x', name: 'Grep', arguments: { pattern: 'limit' } }],
        }),
      ],
    });
    const base = server.baseURL.replace(/\/v1$/, '');
    const result = await replay(['--model', 'anthropic:claude-sonnet-4-5', ...(stream ? ['--stream'] : [])], {
      ANTHROPIC_BASE_URL: base,
      ANTHROPIC_API_KEY: 'sk-ant-test',
    });
    expect(result.exitCode).toBe(0);
    const requests = server.chatRequests();
    expect(requests).toHaveLength(5);
    const body = requests[2]?.body as unknown as {
      system: string;
      max_tokens: number;
      tools: { name: string; input_schema: unknown }[];
      messages: {
        role: string;
        content: { type: string; tool_use_id?: string; content?: string; id?: string }[];
      }[];
    };
    expect(requests[2]?.path).toBe('/v1/messages');
    // The key from ANTHROPIC_API_KEY, sent the way the official SDK sends it.
    const headers = requests[2]?.headers ?? {};
    expect(headers['x-api-key'] ?? headers.authorization).toMatch(/^(Bearer )?sk-ant-test$/);
    expect(requests[2]?.headers['anthropic-version']).toBeDefined();
    expect(typeof body.system).toBe('string');
    expect(body.max_tokens).toBe(4096);
    expect(body.tools.find((t) => t.name === 'Bash')?.input_schema).toMatchObject({ type: 'object' });
    const roles = body.messages.map((m) => m.role);
    expect(roles.every((role, i) => i === 0 || role !== roles[i - 1])).toBe(true);
    const results = body.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
    expect(results.map((b) => b.content)).toEqual(
      expect.arrayContaining([expect.stringContaining('Expected length: 5')]),
    );
    const uses = body.messages.flatMap((m) =>
      m.content.filter((b) => b.type === 'tool_use').map((b) => b.id),
    );
    expect(results.map((b) => b.tool_use_id).sort()).toEqual(uses.sort());
    expect(pairs()[0].completion).toEqual({
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'toolu_x', type: 'function', function: { name: 'Grep', arguments: '{"pattern":"limit"}' } },
      ],
    });
  });
});

describe('system prompt', () => {
  it('is the --system-prompt file when given, else the per-agent default (Claude Code logs record none)', async () => {
    server = await startModelServer({ responders: [() => ({ text: 'ok' })] });
    const file = join(dir.path, 'system.txt');
    writeFileSync(file, 'You are a careful engineer.');
    expect(
      (await replay(['--model', 'openai:m', '--base-url', server.baseURL, '--system-prompt', file])).exitCode,
    ).toBe(0);
    const given = server.chatRequests().map((r) => r.body?.messages?.[0]);
    expect(given).toHaveLength(5);
    expect(given.every((m) => m?.role === 'system' && m.content === 'You are a careful engineer.')).toBe(
      true,
    );
    expect((await replay(['--model', 'openai:m', '--base-url', server.baseURL])).exitCode).toBe(0);
    const fallback = server.chatRequests()[5]?.body?.messages?.[0];
    expect(fallback?.role).toBe('system');
    expect(fallback?.content).not.toBe('You are a careful engineer.');
    expect(String(fallback?.content).length).toBeGreaterThan(20);
  });
});

describe('provider errors', () => {
  it('waits out a 429 with Retry-After and retries; the turn succeeds', async () => {
    let failed = 0;
    server = await startModelServer({
      responders: [
        (_request, index) =>
          index === 0 ? { error: { status: 429, message: 'slow down', retryAfter: 1 } } : { text: 'ok' },
      ],
    });
    const started = Date.now();
    const result = await replay(['--model', 'openai:m', '--base-url', server.baseURL, '--concurrency', '1']);
    failed = JSON.parse(result.stdout).turnsFailed;
    expect(result.exitCode).toBe(0);
    expect(failed).toBe(0);
    expect(server.chatRequests()).toHaveLength(6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('records a turn that still fails after retries (500) with its error, and goes on; exit 1', async () => {
    server = await startModelServer({
      responders: [
        (request) =>
          JSON.stringify(request.messages).includes('Expected length: 5')
            ? { error: { status: 500, message: 'boom' } }
            : { text: 'ok' },
      ],
    });
    const result = await replay(['--model', 'openai:m', '--base-url', server.baseURL, '--retries', '1']);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout);
    // Turns 3, 4 and 5 saw the failure output; each was tried twice (one retry).
    expect(report).toMatchObject({ turnsDone: 2, turnsFailed: 3, status: 'done' });
    expect(server.chatRequests()).toHaveLength(2 + 3 * 2);
    expect(pairs()).toHaveLength(2);
  });

  it('a timeout fails the turn, not the run', async () => {
    server = await startModelServer({
      responders: [(_r, index) => (index === 1 ? { text: 'late', delayMs: 3000 } : { text: 'ok' })],
    });
    const result = await replay([
      '--model',
      'openai:m',
      '--base-url',
      server.baseURL,
      '--timeout',
      '1',
      '--retries',
      '0',
      '--concurrency',
      '1',
    ]);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ turnsDone: 4, turnsFailed: 1 });
  });

  it.each([
    [401, 'authentication failed (401)', 'check the API key'],
    [404, 'not found (404)', 'check the model name and --base-url'],
  ])('stops the run at once on %i with a clear message', async (status, what, advice) => {
    server = await startModelServer({ responders: [() => ({ error: { status, message: 'nope' } })] });
    const result = await replay(['--model', 'openai:m', '--base-url', server.baseURL, '--concurrency', '1']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`error: openai:m: ${what}`);
    expect(result.stderr).toContain(advice);
    expect(result.stderr).toMatch(/hint: nothing more was asked; fix it and continue with --resume run_/);
    // Not retried, and not asked for every other turn.
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('a server that is not there stops the run with a clear message', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const result = await replay([
      '--model',
      'openai:m',
      '--base-url',
      `http://127.0.0.1:${port}/v1`,
      '--retries',
      '0',
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('cannot connect (ECONNREFUSED)');
  });

  it('rejects an unknown provider as a usage error', async () => {
    const result = await replay(['--model', 'bedrock:claude']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      "unknown provider 'bedrock' (use recorded, openai, responses, ollama, anthropic or gemini)",
    );
  });
});
