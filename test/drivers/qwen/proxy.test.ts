// The Qwen driver's proxy on the chat-completions wire (src/drivers/qwen/proxy.ts), over real HTTP: what it sends
// upstream (the recorded results in place of the deny text, by tool_call_id, on every request), what Qwen gets
// back (the upstream's stream passed through, or a recorded turn streamed), what it refuses, and how it tells the
// side calls of the real 0.24.4 requests (test/fixtures/real/qwen-code-0.24.4/requests.jsonl) from the steps.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { denyReason } from '../../../src/drivers/qwen/environment.js';
import {
  kindOf,
  type QwenExchange,
  type QwenProxy,
  type QwenRequest,
  startQwenProxy,
  substitute,
} from '../../../src/drivers/qwen/proxy.js';
import { ChatAssembler } from '../../../src/drivers/wire/openai-chat.js';
import { root } from '../../helpers/cli.js';
import { contentText, type ModelServer, startModelServer } from '../../helpers/model-server.js';

const secret = 'proxy-test-secret-0123456789abcdef';
let proxy: QwenProxy | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await proxy?.close();
  await server?.close();
  proxy = undefined;
  server = undefined;
});

const denied = (id: string) => ({
  role: 'tool',
  tool_call_id: id,
  content: [{ type: 'text', text: denyReason }],
});
const tools = [{ type: 'function', function: { name: 'run_shell_command', parameters: {} } }];

/** A request as Qwen sends it: its system prompt, the prompt, the model's call, Qwen's deny text for it. */
const request = (stream = true): QwenRequest => ({
  model: 'qwen3-coder-plus',
  stream,
  stream_options: { include_usage: true },
  tools,
  messages: [
    { role: 'system', content: 'You are Qwen Code, a non-interactive CLI agent' },
    { role: 'user', content: [{ type: 'text', text: 'Make it.' }] },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'run_shell_command', arguments: '{}' } },
      ],
    },
    denied('call_a'),
  ],
});

const post = (url: string, body: unknown, key = secret) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

async function assembled(answer: Response) {
  const assembler = new ChatAssembler();
  assembler.begin(answer.status, (answer.headers.get('content-type') ?? '').includes('text/event-stream'));
  assembler.push(Buffer.from(await answer.arrayBuffer()));
  return assembler.result();
}

describe('substitute', () => {
  it('puts the recorded text in by tool_call_id, in the shape Qwen sent, and leaves every other message', () => {
    const messages = [
      ...request().messages,
      denied('call_unknown'),
      { role: 'tool', tool_call_id: 'call_s', content: denyReason },
    ];
    const out = substitute(
      messages,
      new Map([
        ['call_a', 'recorded a'],
        ['call_s', 'recorded s'],
      ]),
    );
    expect(out[3]).toEqual({
      role: 'tool',
      tool_call_id: 'call_a',
      content: [{ type: 'text', text: 'recorded a' }],
    });
    expect(out[4]).toBe(messages[4]);
    expect(out[5]).toEqual({ role: 'tool', tool_call_id: 'call_s', content: 'recorded s' });
    expect(out.slice(0, 3)).toEqual(messages.slice(0, 3));
  });
});

describe('kindOf on the requests the real Qwen Code 0.24.4 sent', () => {
  it('tells the summarizers and the memory extractor from the nine agent steps', () => {
    const logged = readFileSync(join(root, 'test/fixtures/real/qwen-code-0.24.4/requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { seq: number; body: string });
    expect(logged.map((entry) => [entry.seq, kindOf(JSON.parse(entry.body) as QwenRequest)])).toEqual([
      [1, 'step'],
      [2, 'step'],
      [3, 'step'],
      [4, 'step'],
      [5, 'step'],
      [6, 'step'],
      [7, 'step'],
      [8, 'compaction'],
      [9, 'step'],
      [10, 'step'],
      [11, 'side'],
      [12, 'compaction'],
    ]);
  });
});

describe('the proxy', () => {
  it('answers from the recording, settles each call, and substitutes it on the next request', async () => {
    const exchanges: QwenExchange[] = [];
    const asked: string[] = [];
    proxy = await startQwenProxy({
      secret,
      upstream: {
        kind: 'recorded',
        next: (kind) =>
          kind === 'step'
            ? {
                message: {
                  role: 'assistant',
                  content: 'Making it.',
                  tool_calls: [
                    {
                      id: 'call_a',
                      type: 'function',
                      function: { name: 'run_shell_command', arguments: '{"command":"touch m"}' },
                    },
                  ],
                },
                usage: { prompt_tokens: 12, completion_tokens: 3 },
              }
            : undefined,
      },
      answer: (call) => {
        asked.push(`${call.id} ${call.name} ${JSON.stringify(call.input)}`);
        return 'recorded output';
      },
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const first = await post(proxy.url, { ...request(), messages: request().messages.slice(0, 2) });
    expect(first.status).toBe(200);
    const answer = await assembled(first);
    expect(answer.message?.tool_calls?.[0]?.id).toBe('call_a');
    expect(answer.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 3 });
    expect(asked).toEqual(['call_a run_shell_command {"command":"touch m"}']);
    await (await post(proxy.url, request())).arrayBuffer();
    expect(contentText(exchanges[1]?.request.messages[3]?.content)).toBe('recorded output');
    expect(JSON.stringify(exchanges[1]?.request)).not.toContain(denyReason);
    expect(proxy.substituted()).toBe(1);
    // Not the run's secret: refused at the gate, never answered.
    expect((await post(proxy.url, request(), 'wrong')).status).toBe(401);
    expect(exchanges).toHaveLength(2);
  });

  it('refuses a step when told to (budget, --on-miss stop), without asking upstream', async () => {
    const exchanges: QwenExchange[] = [];
    proxy = await startQwenProxy({
      secret,
      upstream: { kind: 'recorded', next: () => ({ message: { role: 'assistant', content: 'x' } }) },
      answer: () => '',
      refuse: (kind) => (kind === 'step' ? 'replay-history: stopped' : undefined),
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const refused = await post(proxy.url, request());
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('replay-history: stopped');
    expect(exchanges.map((exchange) => [exchange.kind, exchange.refused])).toEqual([['step', true]]);
  });

  it('forwards to an OpenAI-compatible endpoint: its key, our model, the stream passed on and assembled', async () => {
    server = await startModelServer({
      turns: [
        {
          reasoning: 'think',
          text: 'Running.',
          toolCalls: [{ id: 'call_b', name: 'run_shell_command', arguments: { command: 'ls' } }],
        },
      ],
    });
    const exchanges: QwenExchange[] = [];
    proxy = await startQwenProxy({
      secret,
      upstream: { kind: 'http', baseURL: server.baseURL, model: 'live-model', apiKey: 'sk-upstream' },
      answer: () => 'recorded ls',
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const answer = await assembled(await post(proxy.url, request()));
    expect(answer.message).toMatchObject({ content: 'Running.', reasoning_content: 'think' });
    const sent = server.chatRequests()[0];
    expect(sent?.headers.authorization).toBe('Bearer sk-upstream');
    expect(sent?.body?.model).toBe('live-model');
    expect(sent?.body?.stream).toBe(true);
    expect(JSON.stringify(sent?.body)).not.toContain(secret);
    expect(exchanges[0]).toMatchObject({ kind: 'step', message: { content: 'Running.' } });
    expect(proxy.substituted()).toBe(1);
  });
});
