// `--model recorded`: the loopback endpoint that answers opencode's agent steps with recorded turns, whole or
// streamed as OpenAI streams them, and its title and summary side calls with what the session recorded. Driven
// with plain fetch as opencode would, and through the real recording proxy, whose SSE assembler must put the
// streamed turn back together exactly. Behind the proxy it listens on a Unix socket with the run's secret as its
// key, as in a replay; a request without the secret takes no recorded turn.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/drivers/common/loopback.js';
import { type Exchange, sideCallMarkers, startRecordingProxy } from '../../../src/drivers/opencode/proxy.js';
import {
  exhaustedMessage,
  type RecordedModel,
  type RecordedModelOptions,
  type RecordedTurn,
  startRecordedModel,
} from '../../../src/drivers/opencode/recorded.js';
import { rawRequest } from './raw-request.js';

const secret = newSecret();
const scratch = mkdtempSync(join(tmpdir(), 'recorded-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A recorded model handing out `queue` in order (then nothing), counting how often it was asked. */
async function recordedModel(
  queue: RecordedTurn[],
  extra: Partial<RecordedModelOptions> = {},
): Promise<{ model: RecordedModel; asked: () => number }> {
  let asked = 0;
  const model = await startRecordedModel({
    secret,
    next: () => {
      asked++;
      return queue.shift();
    },
    ...extra,
  });
  cleanups.push(() => model.close());
  return { model, asked: () => asked };
}

const tools = [
  {
    type: 'function',
    function: {
      name: 'read',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { filePath: { type: 'string' } } },
    },
  },
];
const stepMessages = [
  { role: 'system', content: 'You are opencode, an interactive CLI tool that helps users.' },
  { role: 'user', content: 'Read a.ts' },
];
const titleMessages = [
  { role: 'system', content: `${sideCallMarkers.title}. You output ONLY a thread title.` },
  { role: 'user', content: 'Generate a title for this conversation:\n' },
  { role: 'user', content: 'Read a.ts' },
];
const summaryMessages = [
  { role: 'system', content: `${sideCallMarkers.summary}. Summarize the conversation.` },
  { role: 'user', content: 'Read a.ts' },
];

const withCalls: RecordedTurn = {
  message: {
    role: 'assistant',
    content: 'Let me read both files.',
    reasoning_content: 'The user wants a.ts; b.ts imports it.',
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"filePath":"/repo/a.ts"}' } },
      {
        id: 'call_2',
        type: 'function',
        function: { name: 'bash', arguments: '{"command":"cat /repo/b.ts","description":"Show b"}' },
      },
    ],
  },
  usage: { prompt_tokens: 1200, completion_tokens: 85 },
};
const textOnly: RecordedTurn = {
  message: { role: 'assistant', content: 'a.ts exports one constant.' },
  usage: { prompt_tokens: 1500, completion_tokens: 9 },
};
const callsOnly: RecordedTurn = {
  message: {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'read', arguments: '{}' } }],
  },
};

function post(base: string, body: Record<string, unknown>, path = '/chat/completions'): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: 'recorded', ...body }),
  });
}
const step = (base: string, stream = false) => post(base, { messages: stepMessages, tools, stream });

interface Chunk {
  object: string;
  model: string;
  choices: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: Record<string, number>;
}

/** The `data:` events of an SSE body, `[DONE]` kept as that string. */
function events(text: string): (Chunk | '[DONE]')[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      const data = block.slice('data: '.length);
      return data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Chunk);
    });
}

/** Puts a streamed answer back together as an OpenAI client does (tool calls by index). */
function reassemble(chunks: Chunk[]) {
  let role: unknown;
  let content = '';
  let reasoning = '';
  const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
  for (const chunk of chunks) {
    const delta = chunk.choices[0]?.delta ?? {};
    if (delta.role !== undefined) role = delta.role;
    if (typeof delta.content === 'string') content += delta.content;
    if (typeof delta.reasoning_content === 'string') reasoning += delta.reasoning_content;
    for (const piece of (delta.tool_calls ?? []) as {
      index: number;
      id?: string;
      type?: string;
      function?: { name?: string; arguments?: string };
    }[]) {
      calls[piece.index] ??= { id: '', type: '', function: { name: '', arguments: '' } };
      const call = calls[piece.index] as (typeof calls)[number];
      if (piece.id) call.id = piece.id;
      if (piece.type) call.type = piece.type;
      call.function.name += piece.function?.name ?? '';
      call.function.arguments += piece.function?.arguments ?? '';
    }
  }
  return {
    role,
    content: content === '' ? null : content,
    ...(reasoning ? { reasoning_content: reasoning } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

describe('recorded model, whole answers', () => {
  it("answers a step with next()'s turn as a chat completion: message, tool_calls finish, usage", async () => {
    const { model } = await recordedModel([structuredClone(withCalls)]);
    expect(model.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await step(model.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'recorded',
      choices: [{ index: 0, message: withCalls.message, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 1200, completion_tokens: 85, total_tokens: 1285 },
    });
    expect((body.choices as { message: unknown }[])[0]?.message).toEqual(withCalls.message);
    expect(model.answered()).toBe(1);
    expect(model.exhausted()).toBe(0);
  });

  it('finishes a turn without calls with stop, gives turns in order, and counts usage it lacks as zero', async () => {
    const { model } = await recordedModel([structuredClone(textOnly), structuredClone(callsOnly)], {
      model: 'claude-sonnet-4',
    });
    const first = (await (await step(model.url)).json()) as Record<string, unknown>;
    expect(first).toMatchObject({
      model: 'claude-sonnet-4',
      choices: [{ message: textOnly.message, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1500, completion_tokens: 9, total_tokens: 1509 },
    });
    const second = (await (await step(model.url)).json()) as Record<string, unknown>;
    expect(second).toMatchObject({
      choices: [{ message: callsOnly.message, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
    expect(model.answered()).toBe(2);
  });
});

describe('recorded model, streamed answers', () => {
  it('streams a turn as OpenAI does: role, reasoning, text, each call by index, finish, usage, [DONE]', async () => {
    const { model } = await recordedModel([structuredClone(withCalls)]);
    const response = await step(model.url, true);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const all = events(await response.text());
    expect(all.at(-1)).toBe('[DONE]');
    expect(all.filter((event) => event === '[DONE]')).toHaveLength(1);
    const chunks = all.slice(0, -1) as Chunk[];
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe('recorded');
    }
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');

    // Every call arrives with its index, id, type and name.
    const pieces = chunks.flatMap((chunk) => (chunk.choices[0]?.delta.tool_calls ?? []) as unknown[]);
    expect(pieces).toEqual([
      {
        index: 0,
        id: 'call_1',
        type: 'function',
        function: { name: 'read', arguments: '{"filePath":"/repo/a.ts"}' },
      },
      {
        index: 1,
        id: 'call_2',
        type: 'function',
        function: { name: 'bash', arguments: '{"command":"cat /repo/b.ts","description":"Show b"}' },
      },
    ]);

    // One finish chunk, after all content, then a usage chunk with no choices.
    const finishes = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finishes).toHaveLength(1);
    expect(finishes[0]?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    const usage = chunks.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage).toEqual({ prompt_tokens: 1200, completion_tokens: 85, total_tokens: 1285 });
    expect(chunks.indexOf(finishes[0] as Chunk)).toBe(chunks.length - 2);

    expect(reassemble(chunks.slice(0, -1))).toEqual(withCalls.message);
    expect(model.answered()).toBe(1);
  });

  it('streams a text-only turn with a stop finish, and a calls-only turn with no text', async () => {
    const { model } = await recordedModel([structuredClone(textOnly), structuredClone(callsOnly)]);
    const text = events(await (await step(model.url, true)).text()).slice(0, -1) as Chunk[];
    expect(reassemble(text)).toEqual(textOnly.message);
    expect(text.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');
    expect(text.some((chunk) => chunk.choices[0]?.delta.reasoning_content !== undefined)).toBe(false);

    const only = events(await (await step(model.url, true)).text()).slice(0, -1) as Chunk[];
    expect(reassemble(only)).toEqual(callsOnly.message);
    expect(only.at(-1)?.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});

describe('recorded model, side calls and refusals', () => {
  it('answers the title request with the title and a summary request with the summary, never using a turn', async () => {
    const { model, asked } = await recordedModel([structuredClone(textOnly)], {
      title: 'Reading a.ts',
      summaries: ['The user asked to read a.ts; it was read.', 'Then b.ts.'],
    });
    const title = (await (await post(model.url, { messages: titleMessages })).json()) as Record<
      string,
      unknown
    >;
    expect(title).toMatchObject({
      choices: [{ message: { role: 'assistant', content: 'Reading a.ts' }, finish_reason: 'stop' }],
    });
    // opencode streams its title request.
    const streamed = events(await (await post(model.url, { messages: titleMessages, stream: true })).text());
    expect(reassemble(streamed.slice(0, -1) as Chunk[])).toEqual({
      role: 'assistant',
      content: 'Reading a.ts',
    });

    // A summary request is recognised by its system prompt even when it offers tools.
    const summary = (await (await post(model.url, { messages: summaryMessages, tools })).json()) as Record<
      string,
      unknown
    >;
    expect(summary).toMatchObject({
      choices: [{ message: { content: 'The user asked to read a.ts; it was read.' }, finish_reason: 'stop' }],
    });
    // A second compaction gets the second recorded summary, and any later one the last.
    for (const expected of ['Then b.ts.', 'Then b.ts.']) {
      const again = (await (await post(model.url, { messages: summaryMessages })).json()) as {
        choices: { message: { content: string } }[];
      };
      expect(again.choices[0]?.message.content).toBe(expected);
    }
    expect(asked()).toBe(0);
    expect(model.answered()).toBe(0);

    // The recorded turn is still there for the step.
    const body = (await (await step(model.url)).json()) as { choices: { message: unknown }[] };
    expect(body.choices[0]?.message).toEqual(textOnly.message);
  });

  it('refuses a step with HTTP 400 naming the exhausted recording: counted as exhausted, not answered', async () => {
    const { model } = await recordedModel([structuredClone(textOnly)]);
    expect((await step(model.url)).status).toBe(200);
    const refused = await step(model.url);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { message: string } };
    expect(body.error.message).toContain(exhaustedMessage);
    const refusedStream = await step(model.url, true);
    expect(refusedStream.status).toBe(400);
    expect(await refusedStream.text()).toContain(exhaustedMessage);
    expect(model.answered()).toBe(1);
    expect(model.exhausted()).toBe(2);
  });

  it('answers only POST …/chat/completions (404/405 otherwise) and a body that is not JSON with 400', async () => {
    const { model, asked } = await recordedModel([structuredClone(textOnly)]);
    const get = await fetch(`${model.url}/chat/completions`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(get.status).toBe(405);
    expect((await post(model.url, { messages: stepMessages, tools }, '/models')).status).toBe(404);
    expect((await post(model.url, { messages: stepMessages, tools }, '/completions')).status).toBe(404);
    expect((await post(model.url, { messages: stepMessages, tools }, '/chat/completions/x')).status).toBe(
      404,
    );
    const notJson = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      body: '{not json',
    });
    expect(notJson.status).toBe(400);
    expect(asked()).toBe(0);
    expect(model.answered()).toBe(0);
    expect(model.exhausted()).toBe(0);
    // With a query string the path still counts.
    expect((await post(model.url, { messages: stepMessages, tools }, '/chat/completions?x=1')).status).toBe(
      200,
    );
  });
});

describe('recorded model behind the recording proxy', () => {
  /** As the driver wires them: the model on a socket in a private dir, the proxy presenting the secret to it. */
  async function behindProxy(queue: RecordedTurn[]) {
    const socket = join(mkdtempSync(join(scratch, 'tree-')), 'model.sock');
    const { model, asked } = await recordedModel(queue, { socket });
    const seen: Exchange[] = [];
    const proxy = await startRecordingProxy({
      secret,
      upstream: model.url,
      upstreamSocket: socket,
      apiKey: secret,
      onExchange: (e) => seen.push(e),
    });
    cleanups.push(() => proxy.close());
    return { model, proxy, seen, socket, asked };
  }

  it('listens on its socket only (0600), and gives a stranger there no turn', async () => {
    const { model, proxy, socket, asked } = await behindProxy([structuredClone(textOnly)]);
    expect(model.socket).toBe(socket);
    expect(model.url).toBe('http://localhost:0/v1');
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    const body = JSON.stringify({ model: 'recorded', messages: stepMessages, tools });
    const path = '/v1/chat/completions';
    expect((await rawRequest({ to: socket, path, body })).status).toBe(401);
    expect(
      (await rawRequest({ to: socket, path, body, headers: { authorization: 'Bearer sk-replay' } })).status,
    ).toBe(401);
    const foreign = { authorization: `Bearer ${secret}`, host: 'rebound.example' };
    expect((await rawRequest({ to: socket, path, body, headers: foreign })).status).toBe(421);
    expect(asked()).toBe(0);
    expect(model.refused).toEqual({ host: 1, secret: 2, route: 0 });
    // The proxy's own request reaches it with the secret and the socket's Host: the one turn is still there.
    const answer = (await (await step(proxy.url)).json()) as { choices: { message: unknown }[] };
    expect(answer.choices[0]?.message).toEqual(textOnly.message);
    expect(model.answered()).toBe(1);
  });

  it('is put back together by the proxy as the turn that was served, streamed or whole', async () => {
    const { proxy, seen } = await behindProxy([
      structuredClone(withCalls),
      structuredClone(callsOnly),
      structuredClone(textOnly),
    ]);
    const streamed = await step(proxy.url, true);
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(events(text).at(-1)).toBe('[DONE]');
    expect((await step(proxy.url, true)).status).toBe(200);
    await (await step(proxy.url, true)).text();
    await proxy.idle();
    expect(proxy.handlerErrors).toEqual([]);
    expect(seen).toHaveLength(3);
    const [first, second, third] = seen;
    expect(first?.error).toBeUndefined();
    expect(first?.kind).toBe('step');
    expect(first?.request.stream).toBe(true);
    expect(first?.message).toEqual(withCalls.message);
    expect(first?.finish_reason).toBe('tool_calls');
    expect(first?.usage).toEqual({ prompt_tokens: 1200, completion_tokens: 85, total_tokens: 1285 });
    expect(second?.message).toEqual(callsOnly.message);
    expect(second?.error).toBeUndefined();
    expect(third?.message).toEqual(textOnly.message);
    expect(third?.finish_reason).toBe('stop');
  });

  it('passes a whole answer through to the same message', async () => {
    const { proxy, seen } = await behindProxy([structuredClone(withCalls)]);
    const body = (await (await step(proxy.url)).json()) as { choices: { message: unknown }[] };
    expect(body.choices[0]?.message).toEqual(withCalls.message);
    await proxy.idle();
    expect(seen[0]?.message).toEqual(withCalls.message);
    expect(seen[0]?.usage).toMatchObject(withCalls.usage as object);
  });

  it('reports the exhausted recording as an error carrying exhaustedMessage (how the driver tells it apart)', async () => {
    const { model, proxy, seen } = await behindProxy([]);
    const response = await step(proxy.url, true);
    expect(response.status).toBe(400);
    await response.text();
    await proxy.idle();
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toBeNull();
    expect(seen[0]?.status).toBe(400);
    expect(seen[0]?.error).toContain(exhaustedMessage);
    expect(model.exhausted()).toBe(1);
  });

  it('tags the side calls as the proxy sees them and serves their recorded text', async () => {
    const { model: served, proxy, seen } = await behindProxy([]);
    await (await post(proxy.url, { messages: titleMessages, stream: true })).text();
    await (await post(proxy.url, { messages: summaryMessages, stream: true })).text();
    await proxy.idle();
    expect(seen.map((exchange) => [exchange.kind, exchange.message?.content])).toEqual([
      ['title', 'Replay'],
      ['summary', '(no summary was recorded)'],
    ]);
    expect(served.exhausted()).toBe(0);
  });
});
