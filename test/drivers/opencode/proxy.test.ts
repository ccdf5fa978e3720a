// The recording proxy against the scripted model server as the "real model", with plain fetch as opencode:
// answers pass through byte for byte, each chat completion is put back together and tagged, upstream
// failures reach the client as they were and never stop the proxy. Only a request with the run's secret and our
// Host is forwarded; the secret never goes upstream, and no key shows in a recorded error.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/drivers/common/loopback.js';
import { prepareEnvironment } from '../../../src/drivers/opencode/environment.js';
import {
  type Exchange,
  pairFromExchange,
  type RecordingProxy,
  startRecordingProxy,
} from '../../../src/drivers/opencode/proxy.js';
import { pairSchema } from '../../../src/replay/pairs.js';
import {
  contentText,
  type ModelServer,
  type ScriptedReply,
  startModelServer,
} from '../../helpers/model-server.js';
import { opencodeBinary } from '../../helpers/opencode.js';
import { rawRequest } from './raw-request.js';

/** What opencode is given as its provider key: the proxy requires it. */
const secret = newSecret();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function model(replies: ScriptedReply[] = [], chunkSize = 5): Promise<ModelServer> {
  const server = await startModelServer({ turns: replies, chunkSize });
  cleanups.push(() => server.close());
  return server;
}

async function proxy(
  upstream: string,
  extra: Partial<Parameters<typeof startRecordingProxy>[0]> = {},
): Promise<{ proxy: RecordingProxy; seen: Exchange[] }> {
  const seen: Exchange[] = [];
  const started = await startRecordingProxy({
    secret,
    upstream,
    onExchange: (e) => seen.push(e),
    ...extra,
  });
  cleanups.push(() => started.close());
  return { proxy: started, seen };
}

const tools = [
  {
    type: 'function',
    function: {
      name: 'bash',
      description: 'Runs a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
    },
  },
];
const messages = [
  { role: 'system', content: 'You are opencode, an interactive CLI tool.' },
  { role: 'user', content: 'List the files.' },
];

function chat(
  base: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return fetch(`${base}/chat/completions`, {
    method: 'POST',
    ...(signal ? { signal } : {}),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, ...headers },
    body: JSON.stringify({ model: 'scripted', messages, ...body }),
  });
}

/** The SSE bytes with the per-second `created` field blanked (two answers made a second apart differ there). */
function stable(text: string): string {
  return text.replace(/"created":\d+/g, '"created":0');
}

/** A hand-made upstream for what the scripted server cannot do (hold a stream open, cut it). */
async function rawUpstream(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const upstream = createServer(handler);
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        upstream.closeAllConnections();
        upstream.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
}

const firstChunk =
  'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n';

describe('recording proxy', () => {
  it('passes a JSON answer through unchanged and records it', async () => {
    const reply: ScriptedReply = {
      text: 'Two files.',
      reasoning: 'Think first.',
      usage: { promptTokens: 11, completionTokens: 3 },
    };
    const server = await model([reply, reply]);
    const { proxy: p, seen } = await proxy(server.baseURL);

    const direct = await chat(server.baseURL, { stream: false });
    const proxied = await chat(p.url, { stream: false });
    expect(proxied.status).toBe(direct.status);
    expect(proxied.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    const [a, b] = [await direct.text(), await proxied.text()];
    expect(stable(b).replace('chatcmpl-2', 'chatcmpl-1')).toBe(stable(a));

    expect(seen).toHaveLength(1);
    const exchange = seen[0] as Exchange;
    expect(exchange).toMatchObject({
      kind: 'other',
      path: '/v1/chat/completions',
      status: 200,
      request: { model: 'scripted', stream: false, messages, tools: [] },
      message: { role: 'assistant', content: 'Two files.', reasoning_content: 'Think first.' },
      finish_reason: 'stop',
      usage: { prompt_tokens: 11, completion_tokens: 3 },
    });
    expect(exchange.error).toBeUndefined();
    expect(exchange.latency_ms).toBeGreaterThanOrEqual(0);
    // The request reached upstream as sent.
    expect(server.chatRequests()[1]?.body).toEqual({ model: 'scripted', messages, stream: false });
  });

  it('streams byte for byte and assembles parallel tool calls split over many deltas', async () => {
    const reply: ScriptedReply = {
      text: 'Looking around.',
      reasoning: 'The user wants a listing of the directory.',
      toolCalls: [
        { id: 'call_a', name: 'bash', arguments: { command: 'ls -la /some/long/path/to/list' } },
        { id: 'call_b', name: 'bash', arguments: { command: 'cat README.md | head -n 20' } },
      ],
      usage: { promptTokens: 120, completionTokens: 40 },
    };
    const server = await model([reply, reply], 3);
    const { proxy: p, seen } = await proxy(server.baseURL);
    const body = { stream: true, stream_options: { include_usage: true }, tools, tool_choice: 'auto' };

    const direct = await chat(server.baseURL, body);
    const proxied = await chat(p.url, body);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get('content-type')).toBe('text/event-stream');
    expect(proxied.headers.get('cache-control')).toBe(direct.headers.get('cache-control'));
    const [a, b] = [await direct.text(), await proxied.text()];
    expect(stable(b).replaceAll('chatcmpl-2', 'chatcmpl-1')).toBe(stable(a));
    expect(b.split('\n\n').length).toBeGreaterThan(20);

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      kind: 'step',
      status: 200,
      request: { model: 'scripted', stream: true, messages, tools },
      message: {
        role: 'assistant',
        content: 'Looking around.',
        reasoning_content: 'The user wants a listing of the directory.',
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'bash', arguments: '{"command":"ls -la /some/long/path/to/list"}' },
          },
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'bash', arguments: '{"command":"cat README.md | head -n 20"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
      usage: { prompt_tokens: 120, completion_tokens: 40, total_tokens: 160 },
    });
    expect(seen[0]?.error).toBeUndefined();
    expect(p.exchanges).toMatchObject({ step: 1, total: 1, errors: 0 });
  });

  it('passes chunks on as they arrive, without waiting for the end of the stream', async () => {
    // A hand-made upstream that sends one chunk, then waits for the test's go-ahead.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const url = await rawUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(firstChunk);
      void gate.then(() => {
        res.write('data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n');
        res.end('data: [DONE]\n\n');
      });
    });
    const { proxy: p, seen } = await proxy(url);

    const response = await chat(p.url, { stream: true });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"content":"Hel"');
    expect(seen).toHaveLength(0);
    expect(p.inFlight()).toBe(1);
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += new TextDecoder().decode(chunk.value);
    expect(rest).toContain('[DONE]');
    await p.idle();
    expect(seen[0]?.message).toEqual({ role: 'assistant', content: 'Hello' });
    expect(seen[0]?.usage).toBeNull();
    expect(p.inFlight()).toBe(0);
  });

  it('records a stream upstream cuts short as an error, and the client sees it cut', async () => {
    const url = await rawUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(firstChunk, () => setTimeout(() => res.destroy(), 50));
    });
    const { proxy: p, seen } = await proxy(url);
    const response = await chat(p.url, { stream: true, tools });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    await p.idle();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ kind: 'step', message: null });
    expect(seen[0]?.error).toBeDefined();
    expect(p.inFlight()).toBe(0);
  });

  it('stops the upstream call when the client goes away, and records that', async () => {
    let upstreamClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    const url = await rawUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(firstChunk);
      res.on('close', () => upstreamClosed());
    });
    const { proxy: p, seen } = await proxy(url);
    const controller = new AbortController();
    const response = await chat(p.url, { stream: true, tools }, {}, controller.signal);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await closed;
    await p.idle();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toBeNull();
    expect(seen[0]?.error).toMatch(/client closed/);
  });

  it('tags title generation and compaction by their system prompts', async () => {
    const server = await model([{ text: 'A title' }, { text: 'A summary' }, { text: 'Other' }]);
    const { proxy: p, seen } = await proxy(server.baseURL);
    const ask = (system: string, withTools: boolean) =>
      chat(p.url, {
        stream: true,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'Hello there' },
        ],
        ...(withTools ? { tools } : {}),
      }).then((response) => response.text());
    await ask('You are a title generator. You output ONLY a thread title. Nothing else.', false);
    await ask('You are a context summarization agent. You are given a conversation between a user', true);
    await ask('Something else entirely.', false);
    expect(seen.map((exchange) => [exchange.kind, exchange.message?.content])).toEqual([
      ['title', 'A title'],
      ['summary', 'A summary'],
      ['other', 'Other'],
    ]);
    expect(p.exchanges).toMatchObject({ step: 0, title: 1, summary: 1, other: 1, total: 3 });
  });

  it('gives upstream errors to the client as they were and records them', async () => {
    const server = await model([
      { error: { status: 429, message: 'slow down', retryAfter: 7 } },
      { error: { status: 500, message: 'boom' } },
      { text: 'fine now' },
    ]);
    const { proxy: p, seen } = await proxy(server.baseURL);

    const limited = await chat(p.url, { stream: true, tools });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toEqual({ error: { message: 'slow down', type: 'scripted_error' } });
    const failed = await chat(p.url, { stream: false });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: { message: 'boom', type: 'scripted_error' } });
    const fine = await chat(p.url, { stream: true, tools });
    expect(fine.status).toBe(200);
    await fine.text();

    expect(seen.map((exchange) => [exchange.kind, exchange.status, exchange.message])).toEqual([
      ['step', 429, null],
      ['other', 500, null],
      ['step', 200, { role: 'assistant', content: 'fine now' }],
    ]);
    expect(seen[0]?.error).toContain('HTTP 429');
    expect(seen[0]?.error).toContain('slow down');
    expect(seen[1]?.error).toContain('boom');
    expect(p.exchanges.errors).toBe(2);
  });

  it('answers 502 with a JSON error when upstream is down, and keeps serving', async () => {
    const server = await model([{ text: 'back' }]);
    // A port nothing listens on: take one, then close it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const { proxy: down, seen } = await proxy(`http://127.0.0.1:${port}/v1`);
    const response = await chat(down.url, { stream: true, tools });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe('replay_proxy_error');
    expect(body.error.message).toMatch(/ECONNREFUSED/);
    expect(seen[0]).toMatchObject({ kind: 'step', status: 502, message: null });
    expect(seen[0]?.error).toMatch(/ECONNREFUSED/);
    // The same proxy still serves the next request.
    const again = await chat(down.url, { stream: false });
    expect(again.status).toBe(502);
    expect(seen).toHaveLength(2);

    // A live upstream behind a proxy that had a failure keeps working.
    const { proxy: up } = await proxy(server.baseURL);
    expect((await chat(up.url, { stream: false })).status).toBe(200);
  });

  it('answers 504 when upstream is too slow', async () => {
    const server = await model([{ text: 'late', delayMs: 2_000 }]);
    const { proxy: p, seen } = await proxy(server.baseURL, { timeoutMs: 200 });
    const response = await chat(p.url, { stream: true });
    expect(response.status).toBe(504);
    expect(seen[0]?.status).toBe(504);
    expect(seen[0]?.error).toMatch(/timed out/);
  });

  it('replaces the key, forwards nothing but chat completions, and survives a failing onExchange', async () => {
    const server = await model([{ text: 'one' }, { text: 'two' }]);
    let calls = 0;
    const p = await startRecordingProxy({
      secret,
      upstream: `${server.baseURL}/`,
      apiKey: 'sk-real',
      onExchange: () => {
        calls++;
        throw new Error('disk full');
      },
    });
    cleanups.push(() => p.close());
    const models = await fetch(`${p.url}/models`, { headers: { authorization: `Bearer ${secret}` } });
    expect(models.status).toBe(404);
    expect((await chat(p.url, { stream: false })).status).toBe(200);
    expect((await chat(p.url, { stream: true })).status).toBe(200);
    expect(calls).toBe(2);
    expect(p.handlerErrors.map(String)).toEqual(['Error: disk full', 'Error: disk full']);
    expect(server.requests.map((request) => [request.path, request.headers.authorization])).toEqual([
      ['/v1/chat/completions', 'Bearer sk-real'],
      ['/v1/chat/completions', 'Bearer sk-real'],
    ]);
    // Only chat completions are exchanges.
    expect(p.exchanges.total).toBe(2);
  });

  it('sends no key upstream when none is given (never the secret), and listens on loopback only', async () => {
    const server = await model([{ text: 'one' }]);
    const { proxy: p } = await proxy(server.baseURL);
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    await (await chat(p.url, { stream: false })).text();
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(server.requests[0]?.headers)).not.toContain(secret);
  });

  it('forwards, answers and records nothing for a request without the secret, to a foreign Host, or off its route', async () => {
    const server = await model([{ text: 'for opencode only' }]);
    const { proxy: p, seen } = await proxy(server.baseURL, { apiKey: 'sk-real' });
    const port = p.port as number;
    const marker = 'INTRUDER-MARKER-7f3a';
    const body = JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: marker }], tools });
    const path = '/v1/chat/completions';
    const attempts: { expected: number; headers: Record<string, string>; path?: string; method?: string }[] =
      [
        { expected: 401, headers: {} },
        { expected: 401, headers: { authorization: 'Bearer sk-replay' } },
        { expected: 401, headers: { authorization: 'Bearer sk-real' } },
        // A page that rebound its name to 127.0.0.1 sends its own Host; even with the secret it is refused.
        { expected: 421, headers: { authorization: `Bearer ${secret}`, host: `attacker.example:${port}` } },
        { expected: 404, headers: { authorization: `Bearer ${secret}` }, path: '/v1/models' },
        { expected: 404, headers: { authorization: `Bearer ${secret}` }, path: '/v1/chat/completions/x' },
        { expected: 405, headers: { authorization: `Bearer ${secret}` }, method: 'GET' },
      ];
    for (const attempt of attempts) {
      const response = await rawRequest({
        to: port,
        method: attempt.method ?? 'POST',
        path: attempt.path ?? path,
        headers: attempt.headers,
        body,
      });
      expect(response.status, JSON.stringify(attempt)).toBe(attempt.expected);
      expect(response.body).not.toContain('for opencode only');
    }
    await p.idle();
    expect(server.requests).toEqual([]);
    expect(seen).toEqual([]);
    expect(p.exchanges.total).toBe(0);
    expect(p.inFlight()).toBe(0);
    expect(p.refused).toEqual({ host: 1, secret: 3, route: 3 });
    // The one scripted answer is still there for opencode.
    const fine = await chat(p.url, { stream: false });
    expect(
      ((await fine.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe('for opencode only');
    expect(JSON.stringify(server.requests)).not.toContain(marker);
  });

  it('keeps neither key in a recorded error, when upstream echoes the headers it got', async () => {
    const url = await rawUpstream((req, res) => {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `bad key in ${req.headers.authorization}` } }));
    });
    // The recorded model's case: the secret itself is the key upstream gets.
    for (const apiKey of ['sk-real-0123456789', secret]) {
      const { proxy: p, seen } = await proxy(url, { apiKey });
      const response = await chat(p.url, { stream: true, tools });
      expect(response.status).toBe(401);
      await response.text();
      await p.idle();
      expect(seen[0]?.error).toBe('HTTP 401: {"error":{"message":"bad key in Bearer [redacted]"}}');
      expect(JSON.stringify(seen)).not.toContain(apiKey);
    }
  });
});

describe('pairFromExchange', () => {
  it('makes a valid pair from an agent step', async () => {
    const server = await model([
      {
        text: 'Listing.',
        toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: 'ls' } }],
        usage: { promptTokens: 50, completionTokens: 9 },
      },
    ]);
    const { proxy: p, seen } = await proxy(server.baseURL);
    await (await chat(p.url, { stream: true, tools })).text();
    const exchange = seen[0] as Exchange;
    const pair = pairFromExchange(exchange, {
      run: 'run-1',
      session: 'ses_1',
      agent: 'opencode',
      turn: 3,
      model: 'openai:scripted',
    });
    expect(pair).toEqual({
      schema: pairSchema,
      run: 'run-1',
      session: 'ses_1',
      agent: 'opencode',
      turn: 3,
      mode: 'free',
      model: 'openai:scripted',
      messages,
      tools,
      completion: {
        role: 'assistant',
        content: 'Listing.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
        ],
      },
      original: null,
      match: { tool_calls: 'none' },
      usage: { prompt_tokens: 50, completion_tokens: 9 },
      latency_ms: exchange.latency_ms,
      finish_reason: 'tool_calls',
      // opencode built the request: its own prompt and tools.
      sources: { system: 'agent', tools: 'agent' },
    });
    // One JSON line, as PairsWriter writes it.
    expect(JSON.parse(JSON.stringify(pair))).toEqual(pair);
    // Without a model name the request's is used.
    expect(pairFromExchange(exchange, { run: 'r', session: 's', agent: 'a', turn: 0 }).model).toBe(
      'scripted',
    );
  });

  it('refuses an exchange without an answer', () => {
    const failed: Exchange = {
      kind: 'step',
      path: '/v1/chat/completions',
      request: { model: 'm', stream: true, messages: [], tools: [] },
      status: 502,
      message: null,
      finish_reason: null,
      usage: null,
      latency_ms: 1,
      startedAt: new Date().toISOString(),
      error: 'ECONNREFUSED',
    };
    expect(() => pairFromExchange(failed, { run: 'r', session: 's', agent: 'a', turn: 0 })).toThrow(
      /ECONNREFUSED/,
    );
  });
});

describe('recording proxy with the real opencode 1.18.33', { timeout: 150_000 }, () => {
  it('records every call of a run, tags title generation, and opencode works through it', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'opencode-proxy-'));
    cleanups.push(async () => rmSync(scratch, { recursive: true, force: true }));
    const workspace = join(scratch, 'workspace');
    mkdirSync(workspace);
    writeFileSync(join(workspace, 'notes.txt'), 'remember the milk\n');
    const server = await startModelServer({
      turns: [
        { toolCalls: [{ name: 'read', arguments: { filePath: join(workspace, 'notes.txt') } }] },
        { text: 'The note says: remember the milk.' },
      ],
      responders: [
        (request) =>
          contentText(request.messages?.[0]?.content).includes('title generator')
            ? { text: 'Proxy title' }
            : undefined,
      ],
    });
    cleanups.push(() => server.close());
    const { proxy: p, seen } = await proxy(server.baseURL, { apiKey: 'sk-upstream' });
    // No plugin: `read` really runs (read-only, inside the workspace).
    const env = prepareEnvironment({
      workspace,
      baseURL: p.url,
      apiKey: secret,
      model: 'scripted',
      plugin: false,
      parent: scratch,
    });
    cleanups.push(async () => env.cleanup());

    const result = await execa(opencodeBinary(), ['run', '--format', 'json'], {
      cwd: workspace,
      env: env.env,
      extendEnv: false,
      input: 'What does notes.txt say?',
      reject: false,
      timeout: 120_000,
      forceKillAfterDelay: 2_000,
    });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout)).toContain('The note says: remember the milk.');

    // Reported before opencode saw each answer end, so the steps are in by the time it exits.
    expect(seen.filter((exchange) => exchange.kind === 'step')).toHaveLength(2);
    // Title generation runs beside the first step; opencode waits for it, but do not depend on that.
    await p.idle();
    const kinds = seen.map((exchange) => exchange.kind).sort();
    expect(kinds).toEqual(['step', 'step', 'title']);
    expect(seen.every((exchange) => exchange.status === 200 && exchange.error === undefined)).toBe(true);
    expect(server.chatRequests()).toHaveLength(3);
    expect(
      server.chatRequests().every((request) => request.headers.authorization === 'Bearer sk-upstream'),
    ).toBe(true);
    // opencode presented the secret and our Host: nothing of it was refused.
    expect(p.refused).toEqual({ host: 0, secret: 0, route: 0 });

    const title = seen.find((exchange) => exchange.kind === 'title') as Exchange;
    expect(title.request.tools).toEqual([]);
    expect(title.request.stream).toBe(true);
    expect(contentText(title.request.messages[0]?.content)).toMatch(/^You are a title generator\./);
    expect(title.request.messages.slice(1)).toEqual([
      { role: 'user', content: 'Generate a title for this conversation:\n' },
      { role: 'user', content: 'What does notes.txt say?' },
    ]);
    expect(title.message?.content).toBe('Proxy title');

    // The steps hold exactly what upstream received, and the model's answers as opencode got them.
    const steps = seen.filter((exchange) => exchange.kind === 'step');
    const upstreamSteps = server.chatRequests().filter((request) => (request.body?.tools?.length ?? 0) > 0);
    expect(steps.map((step) => step.request.messages)).toEqual(upstreamSteps.map((r) => r.body?.messages));
    expect(steps.map((step) => step.request.tools)).toEqual(upstreamSteps.map((r) => r.body?.tools));
    expect(steps[0]?.message?.tool_calls?.[0]?.function.name).toBe('read');
    expect(steps[0]?.finish_reason).toBe('tool_calls');
    expect(steps[1]?.message?.content).toBe('The note says: remember the milk.');
    const toolResult = steps[1]?.request.messages.find((message) => message.role === 'tool');
    expect(toolResult?.content).toContain('remember the milk');
    const pair = pairFromExchange(steps[1] as Exchange, {
      run: 'r',
      session: 's',
      agent: 'opencode',
      turn: 1,
    });
    expect(pair.tools.length).toBeGreaterThan(5);
    expect(pair.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('reaches the proxy on a Unix socket through the plugin, with the secret, and no TCP port is needed', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'opencode-proxy-socket-'));
    cleanups.push(async () => rmSync(scratch, { recursive: true, force: true }));
    const workspace = join(scratch, 'workspace');
    mkdirSync(workspace);
    const server = await model([{ text: 'Answered over the socket.' }]);
    const tree = mkdtempSync(join(scratch, 'tree-'));
    const socket = join(tree, 'proxy.sock');
    const { proxy: p, seen } = await proxy(server.baseURL, { apiKey: 'sk-upstream', socket });
    expect(p.port).toBeUndefined();
    expect(p.url).toBe('http://localhost:0/v1');
    const env = prepareEnvironment({
      workspace,
      baseURL: p.url,
      apiKey: secret,
      modelSocket: socket,
      model: 'scripted',
      parent: scratch,
    });
    cleanups.push(async () => env.cleanup());
    const result = await execa(opencodeBinary(), ['run', '--format', 'json', '--title', 'Socket'], {
      cwd: workspace,
      env: env.env,
      extendEnv: false,
      input: 'Say something.',
      reject: false,
      timeout: 120_000,
      forceKillAfterDelay: 2_000,
    });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout)).toContain('Answered over the socket.');
    await p.idle();
    expect(seen.map((exchange) => [exchange.kind, exchange.status])).toEqual([['step', 200]]);
    expect(p.refused).toEqual({ host: 0, secret: 0, route: 0 });
    expect(server.chatRequests().map((request) => request.headers.authorization)).toEqual([
      'Bearer sk-upstream',
    ]);
    // The key opencode needs to ask the plugin for the socket fetch, readable by this user only.
    const auth = join(env.dataDir, 'auth.json');
    expect(JSON.parse(readFileSync(auth, 'utf8'))).toEqual({ replay: { type: 'api', key: secret } });
    expect(statSync(auth).mode & 0o777).toBe(0o600);
  });
});
