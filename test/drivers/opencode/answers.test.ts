// The answer server alone: it answers from the recording in order, names misses, refuses anything but a
// well-formed POST /answer, and stops.
import { afterAll, describe, expect, it } from 'vitest';
import { type AnswerServer, startAnswerServer } from '../../../src/drivers/opencode/answers.js';
import type { Message } from '../../../src/model/session.js';
import { ShortCircuit } from '../../../src/replay/shortcircuit.js';

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

const servers: AnswerServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

async function post(url: string, body: unknown, method = 'POST'): Promise<{ status: number; json: unknown }> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: await response.json() };
}

describe('the answer server', () => {
  it('hands out recorded results in order, then names the miss and the nearest calls', async () => {
    const server = await startAnswerServer(new ShortCircuit(recorded, { readOnly: () => false }));
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
    const server = await startAnswerServer({ answer: () => ({ kind: 'miss', nearest: [] }) });
    expect((await post(server.url, {}, 'GET')).status).toBe(404);
    expect((await post(server.url.replace('/answer', '/other'), { tool: 'bash' })).status).toBe(404);
    expect((await post(server.url, 'not json')).status).toBe(400);
    expect((await post(server.url, { args: {} })).status).toBe(400);
    expect(server.asked).toEqual([]);
    await server.close();
    await expect(post(server.url, { tool: 'bash' })).rejects.toThrow();
  });
});
