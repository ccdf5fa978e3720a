// The Codex driver's proxy on the Responses wire (src/drivers/codex/proxy.ts), over real HTTP: what it sends
// upstream (the recorded outputs in place of the hook's text, by call_id, on every request), what Codex gets
// back (the upstream's stream passed through, or a recorded response streamed), what it refuses, and the deny
// hook script on its own.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configToml, denyReason, hookScript } from '../../../src/drivers/codex/environment.js';
import {
  type CodexExchange,
  type CodexProxy,
  callsOf,
  kindOf,
  startCodexProxy,
  substitute,
} from '../../../src/drivers/codex/proxy.js';
import { ResponsesAssembler } from '../../../src/drivers/wire/openai-responses.js';
import { type ModelServer, startModelServer } from '../../helpers/model-server.js';

const secret = 'proxy-test-secret-0123456789abcdef';
const blocked = (input: string) => `Command blocked by PreToolUse hook: ${denyReason}. Command: ${input}`;

let proxy: CodexProxy | undefined;
let server: ModelServer | undefined;
afterEach(async () => {
  await proxy?.close();
  await server?.close();
  proxy = undefined;
  server = undefined;
});

/** A request as Codex sends it: the prompt, the model's calls, Codex's blocked outputs. */
const request = (stream: boolean) => ({
  model: 'gpt-5.5',
  stream,
  tools: [{ type: 'function', name: 'exec_command' }],
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Make it.' }] },
    { type: 'function_call', call_id: 'call_a', name: 'exec_command', arguments: '{"cmd":"touch m"}' },
    { type: 'custom_tool_call', call_id: 'call_b', name: 'apply_patch', input: '*** Begin Patch' },
    { type: 'function_call_output', id: 'fco_1', call_id: 'call_a', output: blocked('touch m') },
    { type: 'custom_tool_call_output', call_id: 'call_b', output: blocked('*** Begin Patch') },
  ],
});

/** Reads an SSE answer back into its response, as Codex would. */
async function assembled(answer: Response) {
  const assembler = new ResponsesAssembler();
  assembler.begin((answer.headers.get('content-type') ?? '').includes('text/event-stream'));
  assembler.push(Buffer.from(await answer.arrayBuffer()));
  return assembler.end();
}

const post = (url: string, body: unknown, key = secret) =>
  fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });

describe('kindOf, substitute, callsOf', () => {
  it('tells a compaction by its turn metadata or its prompt, a step by its tools', () => {
    const body = request(true);
    expect(kindOf(body, JSON.stringify({ request_kind: 'turn' }))).toBe('step');
    expect(kindOf(body, JSON.stringify({ request_kind: 'compaction' }))).toBe('compaction');
    expect(kindOf({ ...body, tools: [] }, undefined)).toBe('side');
    const compaction = {
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'You are performing a CONTEXT CHECKPOINT COMPACTION. Create…' },
          ],
        },
      ],
      tools: [],
    };
    expect(kindOf(compaction, 'not json')).toBe('compaction');
  });

  it('puts an answered output in place by call_id, keeping the item; others stay as Codex sent them', () => {
    const input = request(true).input;
    const out = substitute(input, new Map([['call_a', 'recorded output']]));
    expect(out[3]).toEqual({
      type: 'function_call_output',
      id: 'fco_1',
      call_id: 'call_a',
      output: 'recorded output',
    });
    expect(out[4]).toBe(input[4]);
    expect(out.slice(0, 3)).toEqual(input.slice(0, 3));
  });

  it('reads a response’s calls: a function call’s arguments parsed, a free-form call as {input}', () => {
    const calls = callsOf({
      id: 'r',
      model: 'm',
      status: 'completed',
      output: [
        { type: 'reasoning', summary: [] },
        {
          type: 'function_call',
          call_id: 'c1',
          name: 'spawn_agent',
          namespace: 'multi_agent_v1',
          arguments: '{"x":1}',
        },
        { type: 'function_call', call_id: 'c2', name: 'exec_command', arguments: 'not json' },
        { type: 'custom_tool_call', call_id: 'c3', name: 'apply_patch', input: 'patch' },
      ],
    });
    expect(calls).toEqual([
      { id: 'c1', name: 'spawn_agent', namespace: 'multi_agent_v1', input: { x: 1 }, freeform: false },
      { id: 'c2', name: 'exec_command', input: { raw: 'not json' }, freeform: false },
      { id: 'c3', name: 'apply_patch', input: { input: 'patch' }, freeform: true },
    ]);
  });
});

describe('the proxy', () => {
  it('sends upstream the recorded outputs of calls it answered, streams the answer back, and reports each step', async () => {
    server = await startModelServer({
      turns: [
        { toolCalls: [{ id: 'call_a', name: 'exec_command', arguments: { cmd: 'touch m' } }] },
        { text: 'Done.' },
      ],
    });
    const exchanges: CodexExchange[] = [];
    const asked: string[] = [];
    proxy = await startCodexProxy({
      secret,
      upstream: { kind: 'http', baseURL: server.baseURL, model: 'upstream-model', apiKey: 'sk-up' },
      answer: (call) => {
        asked.push(call.id);
        return `recorded for ${call.id}`;
      },
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const first = await assembled(
      await post(proxy.url, { ...request(true), input: request(true).input.slice(0, 1) }),
    );
    expect('response' in first && first.response.output.map((item) => item.type)).toEqual(['function_call']);
    expect(asked).toEqual(['call_a']);
    await assembled(await post(proxy.url, request(true)));
    const sent = server.chatRequests();
    expect(sent.map((entry) => entry.body?.model)).toEqual(['upstream-model', 'upstream-model']);
    expect(sent[1]?.headers.authorization).toBe('Bearer sk-up');
    const input = sent[1]?.body?.input as { call_id?: string; output?: unknown }[];
    // call_a was answered (the model made it through this proxy); call_b was not, and stays as Codex sent it.
    expect(input.find((item) => item.call_id === 'call_a' && item.output !== undefined)?.output).toBe(
      'recorded for call_a',
    );
    expect(input.find((item) => item.call_id === 'call_b' && item.output !== undefined)?.output).toBe(
      blocked('*** Begin Patch'),
    );
    expect(exchanges.map((exchange) => [exchange.kind, exchange.error])).toEqual([
      ['step', undefined],
      ['step', undefined],
    ]);
    expect(proxy.substituted()).toBe(1);
  });

  it('answers from the recording, streamed or as one body, and says when the recording has no turn left', async () => {
    const responses = [
      {
        id: 'resp_1',
        model: 'recorded',
        status: 'completed',
        output: [
          { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking.' }] },
          { id: 'ctc_1', type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: 'patch' },
        ],
        usage: { input_tokens: 10, output_tokens: 2 },
      },
    ];
    const exchanges: CodexExchange[] = [];
    proxy = await startCodexProxy({
      secret,
      upstream: { kind: 'recorded', next: () => responses.shift() },
      answer: () => 'recorded',
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const streamed = await assembled(await post(proxy.url, request(true)));
    expect(streamed).toMatchObject({
      response: {
        id: 'resp_1',
        output: [
          { type: 'reasoning', summary: [{ text: 'Thinking.' }] },
          { type: 'custom_tool_call', call_id: 'call_p', input: 'patch' },
        ],
        usage: { input_tokens: 10 },
      },
    });
    const none = await post(proxy.url, { ...request(false) });
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('the recording has no turn to answer with here');
    expect(exchanges.at(-1)?.exhausted).toBe(true);
  });

  it('refuses a step it is told to (budget, --on-miss stop) without sending it, and gates every request', async () => {
    server = await startModelServer({ turns: [{ text: 'never asked' }] });
    proxy = await startCodexProxy({
      secret,
      upstream: { kind: 'http', baseURL: server.baseURL, model: 'm' },
      answer: () => '',
      refuse: (kind) => (kind === 'step' ? 'replay-history: the budget is spent' : undefined),
    });
    const refused = await post(proxy.url, request(true));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('the budget is spent');
    expect((await post(proxy.url, request(true), 'another-key-0123456789')).status).toBe(401);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('says what the upstream said when it fails, and that it is down when it is', async () => {
    server = await startModelServer({ turns: [{ error: { status: 429, message: 'slow down' } }] });
    const exchanges: CodexExchange[] = [];
    proxy = await startCodexProxy({
      secret,
      upstream: { kind: 'http', baseURL: server.baseURL, model: 'm' },
      answer: () => '',
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const limited = await post(proxy.url, request(true));
    expect(limited.status).toBe(429);
    expect(exchanges[0]?.error).toMatch(/^HTTP 429: .*slow down/);
    await proxy.close();
    proxy = await startCodexProxy({
      secret,
      upstream: { kind: 'http', baseURL: 'http://127.0.0.1:9/v1', model: 'm' },
      answer: () => '',
      onExchange: (exchange) => exchanges.push(exchange),
    });
    const down = await post(proxy.url, request(true));
    expect(down.status).toBe(502);
    expect(exchanges[1]?.error).toContain('the model endpoint http://127.0.0.1:9/v1');
  });
});

describe('the deny hook and the config', () => {
  it('denies with exit 2 and the reason on stderr, whatever its input, even when it cannot print', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codex-hook-'));
    try {
      const hook = join(dir, 'hook.sh');
      writeFileSync(hook, hookScript(), { mode: 0o700 });
      const denied = spawnSync(hook, [], {
        input: JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'ls' } }),
      });
      expect(denied.status).toBe(2);
      expect(String(denied.stderr)).toBe(`${denyReason}\n`);
      expect(String(denied.stdout)).toBe('');
      // Its stderr closed: the deny stands.
      const closed = spawnSync('/bin/sh', ['-c', `${hook} 2>&-`], { input: 'x' });
      expect(closed.status).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes a config with our provider alone, read-only, retries off, the hook on every tool', () => {
    const text = configToml({
      model: 'gpt-5.5',
      baseURL: 'http://127.0.0.1:1234',
      hook: '/tree/hook "x".sh',
      compactAt: 100000,
    });
    expect(text).toContain('model_provider = "replay_history"');
    expect(text).toContain('base_url = "http://127.0.0.1:1234/v1"');
    expect(text).toContain('sandbox_mode = "read-only"');
    expect(text).toContain('request_max_retries = 0');
    expect(text).toContain('model_auto_compact_token_limit = 100000');
    expect(text).toContain('matcher = ".*"');
    expect(text).toContain('command = "/tree/hook \\"x\\".sh"');
    expect(text).not.toContain('update_plan');
  });
});
