// The answer server alone: it answers from the recording in order, names misses, refuses anything but a
// well-formed POST /answer with the run's secret, and stops. A stranger's request takes no recorded result.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/drivers/common/loopback.js';
import { type AnswerServer, startAnswerServer } from '../../../src/drivers/opencode/answers.js';
import type { Message } from '../../../src/model/session.js';
import { ShortCircuit } from '../../../src/replay/shortcircuit.js';
import { rawRequest } from './raw-request.js';

const source = { file: 'recorded.jsonl', line: 1 };
const recorded: Message[] = [
  {
    role: 'assistant',
    source,
    parts: [
      { type: 'tool_call', id: 'a', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_call', id: 'b', name: 'bash', input: { command: 'ls' } },
    ],
  },
  {
    role: 'tool',
    source,
    parts: [
      { type: 'tool_result', callId: 'a', output: 'one', isError: false },
      { type: 'tool_result', callId: 'b', output: [{ type: 'text', text: 'two' }], isError: false },
    ],
  },
];

const secret = newSecret();
const scratch = mkdtempSync(join(tmpdir(), 'answers-'));
const servers: AnswerServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function post(url: string, body: unknown, method = 'POST'): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: await response.json() };
}

describe('the answer server', () => {
  it('hands out recorded results in order, then names the miss and the nearest calls', async () => {
    const server = await startAnswerServer(new ShortCircuit(recorded, { readOnly: () => false }), { secret });
    servers.push(server);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/answer$/);
    const ask = { tool: 'bash', args: { command: 'ls' }, callID: 'c1', sessionID: 's1' };
    expect((await post(server.url, ask)).json).toEqual({
      title: '',
      output: 'one',
      metadata: {},
      isError: false,
    });
    expect((await post(server.url, ask)).json).toEqual({
      title: '',
      output: 'two',
      metadata: {},
      isError: false,
    });
    const miss = await post(server.url, ask);
    expect(miss.status).toBe(200);
    expect(miss.json).toMatchObject({ isError: true });
    expect((miss.json as { output: string }).output).toBe(
      [
        'replay-history: bash {"command":"ls"} is not in the recording; nothing was run.',
        'Nearest recorded calls:',
        '- bash {"command":"ls"} (differs: nothing)',
      ].join('\n'),
    );
    expect(server.asked.map((asked) => asked.answer.kind)).toEqual(['hit', 'hit', 'miss']);
    expect(server.asked[0]?.request).toEqual({ ...ask, messageID: null, agent: null });
  });

  it('refuses other routes and malformed requests, and stops', async () => {
    const server = await startAnswerServer({ answer: () => ({ kind: 'miss', nearest: [] }) }, { secret });
    expect((await post(server.url, {}, 'GET')).status).toBe(405);
    expect((await post(server.url.replace('/answer', '/other'), { tool: 'bash' })).status).toBe(404);
    expect((await post(server.url, 'not json')).status).toBe(400);
    expect((await post(server.url, { args: {} })).status).toBe(400);
    expect(server.asked).toEqual([]);
    await server.close();
    await expect(post(server.url, { tool: 'bash' })).rejects.toThrow();
  });
});

describe.each([
  ['its TCP port', false],
  ['its Unix socket', true],
])('the answer server on %s, asked by a stranger', (_, onSocket) => {
  it('gives no recorded result without the secret or to a foreign Host, and the agent still gets each in order', async () => {
    const socket = onSocket ? join(mkdtempSync(join(scratch, 'tree-')), 'answers.sock') : undefined;
    const server = await startAnswerServer(new ShortCircuit(recorded, { readOnly: () => false }), {
      secret,
      ...(socket ? { socket } : {}),
    });
    servers.push(server);
    const to = server.socket ?? (server.port as number);
    if (socket) expect(server.url).toBe('http://localhost:0/answer');
    const body = JSON.stringify({ tool: 'bash', args: { command: 'ls' }, callID: 'x', sessionID: 'x' });
    const stranger: { path: string; body: string; headers?: Record<string, string> }[] = [
      { path: '/answer', body },
      { path: '/answer', body, headers: { authorization: 'Bearer sk-replay' } },
      { path: '/answer', body, headers: { authorization: `Bearer ${secret}`, host: 'rebound.example' } },
    ];
    for (const attempt of stranger) {
      const response = await rawRequest({ to, ...attempt });
      expect([401, 421]).toContain(response.status);
      // Nothing recorded in the answer: neither output.
      expect(response.body).not.toMatch(/one|two/);
    }
    expect(server.refused).toEqual({ host: 1, secret: 2, route: 0 });
    expect(server.asked).toEqual([]);
    // The agent's own calls get the first and the second result: the stranger took neither.
    const ask = (
      await rawRequest({ to, path: '/answer', body, headers: { authorization: `Bearer ${secret}` } })
    ).body;
    expect(JSON.parse(ask)).toMatchObject({ output: 'one', isError: false });
    const again = (
      await rawRequest({ to, path: '/answer', body, headers: { authorization: `Bearer ${secret}` } })
    ).body;
    expect(JSON.parse(again)).toMatchObject({ output: 'two', isError: false });
    expect(server.asked).toHaveLength(2);
  });
});
