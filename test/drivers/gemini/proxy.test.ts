// The Gemini driver's proxy on the Gemini API wire (src/drivers/gemini/proxy.ts), over real HTTP: a recorded turn
// given to Gemini CLI with our ids on its calls, each call settled before the answer ends and its result put in
// place of the blocked one on the next request; the summarizer's self-check answered with the summary; a live
// Gemini API endpoint asked under its key only, its stream passed on with ids added; errors passed through and
// said; refusals; the run's secret at the gate.
import { afterEach, describe, expect, it } from 'vitest';
import type { HeadlessCall } from '../../../src/drivers/common/headless.js';
import { blockedText } from '../../../src/drivers/gemini/environment.js';
import {
  type GeminiExchange,
  type GeminiProxy,
  sideCallMarkers,
  startGeminiProxy,
} from '../../../src/drivers/gemini/proxy.js';
import { GeminiAssembler, type GeminiRequest } from '../../../src/drivers/wire/gemini.js';
import { type ModelServer, startModelServer } from '../../helpers/model-server.js';

const secret = 'gemini-proxy-test-secret-0123456789abcdef';
let proxy: GeminiProxy | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await proxy?.close();
  await server?.close();
  proxy = undefined;
  server = undefined;
});

const tools = [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: {} }] }];

/** A step as Gemini CLI sends it: its system instruction, the prompt, and (after a call) the blocked result. */
const step = (called?: string): GeminiRequest => ({
  systemInstruction: { parts: [{ text: 'You are Gemini CLI, an interactive CLI agent' }] },
  tools,
  contents: [
    { role: 'user', parts: [{ text: 'Make it.' }] },
    ...(called
      ? [
          {
            role: 'model',
            parts: [
              { functionCall: { id: called, name: 'run_shell_command', args: { command: 'touch m' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              {
                functionResponse: { id: called, name: 'run_shell_command', response: { error: blockedText } },
              },
            ],
          },
        ]
      : []),
  ],
});

const post = (url: string, body: unknown, options: { key?: string; stream?: boolean; model?: string } = {}) =>
  fetch(
    `${url}/v1beta/models/${options.model ?? 'gemini-2.5-pro'}:${options.stream === false ? 'generateContent' : 'streamGenerateContent?alt=sse'}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': options.key ?? secret },
      body: JSON.stringify(body),
    },
  );

async function assembled(answer: Response) {
  const assembler = new GeminiAssembler(() => 'unnamed');
  assembler.begin(answer.status, (answer.headers.get('content-type') ?? '').includes('text/event-stream'));
  assembler.push(Buffer.from(await answer.arrayBuffer()));
  assembler.end();
  return assembler.result();
}

const recordedCall = {
  role: 'assistant' as const,
  content: 'Making it.',
  tool_calls: [
    {
      id: 'call_from_the_recording',
      type: 'function' as const,
      function: { name: 'run_shell_command', arguments: '{"command":"touch m"}' },
    },
  ],
};

describe('the Gemini proxy', () => {
  it('answers from the recording with our ids, settles each call, and puts its result in place next time', async () => {
    const exchanges: GeminiExchange[] = [];
    const asked: HeadlessCall[] = [];
    proxy = await startGeminiProxy({
      secret,
      upstream: {
        kind: 'recorded',
        next: (kind) =>
          kind === 'step'
            ? { message: recordedCall, usage: { prompt_tokens: 12, completion_tokens: 3 } }
            : undefined,
      },
      answer: (call) => {
        asked.push(call);
        return { text: 'recorded output', isError: false };
      },
      onExchange: (exchange) => exchanges.push(exchange),
    });
    for (const stream of [true, false]) {
      const answer = await assembled(await post(proxy.url, step(), { stream }));
      // The recording's ids are another run's: ours, one per call.
      expect(answer.message?.tool_calls?.map((call) => call.id)).toEqual([stream ? 'rh_1' : 'rh_2']);
      expect(answer.message?.content).toBe('Making it.');
      expect(answer.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3 });
    }
    expect(asked).toEqual([
      { id: 'rh_1', name: 'run_shell_command', input: { command: 'touch m' } },
      { id: 'rh_2', name: 'run_shell_command', input: { command: 'touch m' } },
    ]);
    await (await post(proxy.url, step('rh_1'))).arrayBuffer();
    const sent = exchanges[2]?.request.contents[2]?.parts?.[0]?.functionResponse?.response;
    expect(sent).toEqual({ output: 'recorded output' });
    expect(JSON.stringify(exchanges[2]?.request)).not.toContain(blockedText);
    expect(exchanges.map((exchange) => [exchange.kind, exchange.model])).toEqual([
      ['step', 'gemini-2.5-pro'],
      ['step', 'gemini-2.5-pro'],
      ['step', 'gemini-2.5-pro'],
    ]);
    // Each answer settled its call (the third, answered from the same recorded turn, one more).
    expect(proxy.substituted()).toBe(3);
    // Not the run's secret: refused at the gate, never answered; nor a path that is not a model call.
    expect((await post(proxy.url, step(), { key: 'wrong' })).status).toBe(401);
    const other = await fetch(`${proxy.url}/v1beta/models/x:countTokens`, {
      method: 'POST',
      headers: { 'x-goog-api-key': secret },
      body: '{}',
    });
    expect(other.status).toBe(404);
    expect((await post(proxy.url, { not: 'gemini' })).status).toBe(400);
    expect(exchanges).toHaveLength(3);
  });

  it('answers the summarizer with the recorded summary, and its self-check with the same summary', async () => {
    const exchanges: GeminiExchange[] = [];
    const summary = {
      role: 'assistant' as const,
      content: '<state_snapshot>the recorded one</state_snapshot>',
    };
    let summaries = 0;
    proxy = await startGeminiProxy({
      secret,
      upstream: {
        kind: 'recorded',
        next: (kind) => (kind === 'compaction' && summaries++ === 0 ? { message: summary } : undefined),
      },
      answer: () => ({ text: '', isError: false }),
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const summarizer = (last: string): GeminiRequest => ({
      systemInstruction: { parts: [{ text: `${sideCallMarkers.summarizer} into a snapshot.` }] },
      contents: [{ role: 'user', parts: [{ text: last }] }],
    });
    const first = await assembled(await post(proxy.url, summarizer('Summarize.'), { stream: false }));
    expect(first.message?.content).toBe(summary.content);
    const check = await assembled(
      await post(proxy.url, summarizer(`${sideCallMarkers.check} you gave.`), { stream: false }),
    );
    expect(check.message?.content).toBe(summary.content);
    expect(summaries).toBe(1);
    expect(exchanges.map((exchange) => exchange.kind)).toEqual(['compaction', 'compaction']);
  });

  it('refuses a step when told to (budget, --on-miss stop), and says when the recording has nothing left', async () => {
    const exchanges: GeminiExchange[] = [];
    proxy = await startGeminiProxy({
      secret,
      upstream: { kind: 'recorded', next: () => undefined },
      answer: () => ({ text: '', isError: false }),
      refuse: (kind) => (kind === 'side' ? 'replay-history: stopped' : undefined),
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const refused = await post(proxy.url, { contents: [{ role: 'user', parts: [{ text: 'a title' }] }] });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('replay-history: stopped');
    const exhausted = await post(proxy.url, step());
    expect(exhausted.status).toBe(400);
    expect(
      exchanges.map((exchange) => [exchange.kind, exchange.refused ?? false, exchange.exhausted ?? false]),
    ).toEqual([
      ['side', true, false],
      ['step', false, true],
    ]);
  });

  it('forwards to a Gemini API endpoint under its key, and passes the stream on with our ids on its calls', async () => {
    server = await startModelServer({
      turns: [
        {
          reasoning: 'think',
          text: 'Running.',
          toolCalls: [{ name: 'run_shell_command', arguments: { command: 'ls' } }],
        },
      ],
    });
    const exchanges: GeminiExchange[] = [];
    proxy = await startGeminiProxy({
      secret,
      upstream: {
        kind: 'http',
        baseURL: server.baseURL.replace(/\/v1$/, ''),
        model: 'live-model',
        apiKey: 'upstream-key',
      },
      answer: () => ({ text: 'recorded ls', isError: false }),
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const answer = await assembled(await post(proxy.url, step()));
    expect(answer.message).toMatchObject({ content: 'Running.', reasoning_content: 'think' });
    expect(answer.message?.tool_calls?.map((call) => [call.id, call.function.name])).toEqual([
      ['rh_1', 'run_shell_command'],
    ]);
    const upstream = server.chatRequests()[0];
    expect(upstream?.path).toBe('/v1beta/models/live-model:streamGenerateContent');
    expect(upstream?.headers['x-goog-api-key']).toBe('upstream-key');
    expect(JSON.stringify(upstream?.headers)).not.toContain(secret);
    expect(exchanges[0]?.message?.tool_calls?.[0]?.id).toBe('rh_1');
    // The next request carries the blocked result: upstream gets the recorded one.
    await (await post(proxy.url, step('rh_1'))).arrayBuffer();
    const second = server.chatRequests()[1]?.body as GeminiRequest | undefined;
    expect(second?.contents[2]?.parts?.[0]?.functionResponse?.response).toEqual({ output: 'recorded ls' });
  });

  it('passes an upstream error through and says it; a dead endpoint is a 502 that names it, never the key', async () => {
    server = await startModelServer({ turns: [{ error: { status: 429, message: 'Resource exhausted' } }] });
    const exchanges: GeminiExchange[] = [];
    proxy = await startGeminiProxy({
      secret,
      upstream: {
        kind: 'http',
        baseURL: server.baseURL.replace(/\/v1$/, ''),
        model: 'live-model',
        apiKey: 'upstream-key-123',
      },
      answer: () => ({ text: '', isError: false }),
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const limited = await post(proxy.url, step());
    expect(limited.status).toBe(429);
    expect(await limited.text()).toContain('Resource exhausted');
    expect(exchanges[0]?.error).toMatch(/^HTTP 429: .*Resource exhausted/);
    await proxy.close();
    proxy = await startGeminiProxy({
      secret,
      upstream: { kind: 'http', baseURL: 'http://127.0.0.1:9', model: 'm', apiKey: 'upstream-key-123' },
      answer: () => ({ text: '', isError: false }),
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const dead = await post(proxy.url, step());
    expect(dead.status).toBe(502);
    const said = await dead.text();
    expect(said).toContain('the model endpoint http://127.0.0.1:9');
    expect(said).not.toContain('upstream-key-123');
  });
});
