// The Gemini API wire as the Gemini driver's proxy sees it (src/drivers/wire/gemini.ts): the real 0.61.0 requests
// read as chat pairs and told apart (steps, the compression summarizer, side calls), results put in place by id,
// answers assembled from server-sent events cut anywhere with an id given to every unnamed call, and a recorded
// message written as Gemini CLI reads it and read back the same.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSummaryCheck, kindOf } from '../../../src/drivers/gemini/proxy.js';
import {
  GeminiAssembler,
  type GeminiRequest,
  geminiChat,
  modelParts,
  responseText,
  substituteResults,
  writeGeminiStream,
} from '../../../src/drivers/wire/gemini.js';
import { root } from '../../helpers/cli.js';

interface Logged {
  seq: number;
  url: string;
  body: GeminiRequest;
}

const logged: Logged[] = readFileSync(
  join(root, 'test/fixtures/real/gemini-cli-0.61.0/requests.jsonl'),
  'utf8',
)
  .trim()
  .split('\n')
  .map((line) => {
    const entry = JSON.parse(line) as { seq: number; url: string; body: string | GeminiRequest };
    return {
      seq: entry.seq,
      url: entry.url,
      body: (typeof entry.body === 'string' ? JSON.parse(entry.body) : entry.body) as GeminiRequest,
    };
  });

describe('the real Gemini CLI 0.61.0 requests', () => {
  it('are told apart: every streamed request a step, the summarizer a compaction, the router and title side calls', () => {
    const kinds = logged.map((request) => [request.seq, kindOf(request.body)]);
    for (const request of logged) {
      const kind = kindOf(request.body);
      // The agent's own steps are the streamed ones, and only they offer tools.
      if (request.url.includes(':streamGenerateContent')) expect(kind, String(request.seq)).toBe('step');
      else expect(kind, String(request.seq)).not.toBe('step');
    }
    // Runs 03 and 04 of the fixture (SOURCES.md) each compressed: a summary then its self-check, twice.
    const compactions = logged.filter((request) => kindOf(request.body) === 'compaction');
    expect(compactions.length, JSON.stringify(kinds)).toBe(4);
    expect(compactions.map((request) => isSummaryCheck(request.body))).toEqual([false, true, false, true]);
    expect(kinds.filter(([, kind]) => kind === 'side').length).toBeGreaterThanOrEqual(4);
  });

  it('read as chat pairs: the system instruction, each text part, every call and result under its id', () => {
    for (const request of logged.filter((entry) => kindOf(entry.body) === 'step')) {
      const { messages, tools } = geminiChat(request.body);
      expect(messages[0]?.role).toBe('system');
      expect(tools.map((tool) => tool.function.name)).toContain('run_shell_command');
      const calls = request.body.contents.flatMap((content) =>
        (content.parts ?? []).filter((part) => part.functionCall),
      );
      const results = request.body.contents.flatMap((content) =>
        (content.parts ?? []).filter((part) => part.functionResponse),
      );
      const asked = messages.flatMap((message) =>
        message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
      );
      // A call the model named none (the sub-agent's) goes under its function's name, as does its result.
      expect(asked).toEqual(calls.map((part) => part.functionCall?.id ?? part.functionCall?.name));
      const answered = messages.filter((message) => message.role === 'tool');
      expect(answered.map((message) => message.tool_call_id)).toEqual(
        results.map((part) => part.functionResponse?.id ?? part.functionResponse?.name),
      );
      expect(answered.map((message) => message.content)).toEqual(
        results.map((part) => responseText(part.functionResponse?.response)),
      );
    }
  });
});

describe('substituteResults', () => {
  it('puts each answer in place by call id, an error as {error}, and leaves other results alone', () => {
    const request: GeminiRequest = {
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { id: 'rh_1', name: 'run_shell_command', args: { command: 'ls' } } },
            { functionCall: { id: 'rh_2', name: 'read_file', args: { file_path: 'x' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'rh_1', name: 'run_shell_command', response: { error: 'blocked' } } },
            { functionResponse: { id: 'rh_2', name: 'read_file', response: { error: 'blocked' } } },
            { functionResponse: { id: 'rh_9', name: 'glob', response: { output: 'untouched' } } },
          ],
        },
      ],
    };
    const answers = new Map([
      ['rh_1', { text: 'a\nb', isError: false }],
      ['rh_2', { text: 'File not found: x', isError: true }],
    ]);
    const out = substituteResults(request, answers);
    expect(out.contents[2]?.parts?.map((part) => part.functionResponse?.response)).toEqual([
      { output: 'a\nb' },
      { error: 'File not found: x' },
      { output: 'untouched' },
    ]);
    // The CLI's request is not changed in place, and contents without answered results are the same objects.
    expect(request.contents[2]?.parts?.[0]?.functionResponse?.response).toEqual({ error: 'blocked' });
    expect(out.contents[0]).toBe(request.contents[0]);
  });
});

/** A stream of the Gemini API: text in two events, then two calls (no ids) with the usage. */
const events = [
  { candidates: [{ content: { role: 'model', parts: [{ text: 'Looking ' }] }, index: 0 }] },
  { candidates: [{ content: { role: 'model', parts: [{ text: 'at it — ✓' }] }, index: 0 }] },
  {
    candidates: [
      {
        content: {
          role: 'model',
          parts: [
            { functionCall: { name: 'run_shell_command', args: { command: 'ls' } } },
            { functionCall: { id: 'kept', name: 'read_file', args: { file_path: 'README.md' } } },
          ],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 7, totalTokenCount: 127 },
  },
];
const sse = events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join('');

describe('GeminiAssembler', () => {
  it('gives every unnamed call an id of ours, keeps one it has, and passes every event on, however it is cut', () => {
    const bytes = Buffer.from(sse);
    for (const cut of [1, 2, 3, 7, 64, bytes.length]) {
      let id = 0;
      const assembler = new GeminiAssembler(() => `rh_${++id}`);
      assembler.begin(200, true);
      let passed = '';
      for (let at = 0; at < bytes.length; at += cut) passed += assembler.push(bytes.subarray(at, at + cut));
      passed += assembler.end();
      const result = assembler.result();
      expect(result.error, String(cut)).toBeUndefined();
      expect(result.message?.content).toBe('Looking at it — ✓');
      expect(result.message?.tool_calls?.map((call) => [call.id, call.function.name])).toEqual([
        ['rh_1', 'run_shell_command'],
        ['kept', 'read_file'],
      ]);
      expect(result.usage).toEqual({ prompt_tokens: 120, completion_tokens: 7 });
      // What Gemini CLI is given: the same events, the unnamed call now named.
      const given = passed
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5)) as (typeof events)[number]);
      expect(given).toHaveLength(3);
      expect(given[2]?.candidates[0]?.content.parts[0]).toEqual({
        functionCall: { id: 'rh_1', name: 'run_shell_command', args: { command: 'ls' } },
      });
      expect(given.slice(0, 2)).toEqual(events.slice(0, 2));
    }
  });

  it('says what went wrong: an HTTP error with its message, an event that is not JSON, an error event, nothing', () => {
    const run = (status: number, stream: boolean, body: string) => {
      const assembler = new GeminiAssembler(() => 'rh');
      assembler.begin(status, stream);
      const passed = assembler.push(Buffer.from(body)) + assembler.end();
      return { passed, result: assembler.result() };
    };
    const limited = run(429, true, JSON.stringify({ error: { code: 429, message: 'Resource exhausted' } }));
    expect(limited.result.error).toBe('HTTP 429: Resource exhausted');
    expect(run(200, true, 'data: {"candidates": [\n\n').result.error).toMatch(/^an event that is not JSON/);
    expect(run(200, true, `data: ${JSON.stringify({ error: { code: 500 } })}\n\n`).result.error).toMatch(
      /^the model's stream ended with an error/,
    );
    expect(run(200, true, '').result.error).toBe('an empty answer');
    expect(run(200, false, '<html>').result.error).toMatch(/^an answer that is not JSON/);
    // A whole (non-streamed) answer is named too.
    const whole = run(200, false, JSON.stringify(events[2]));
    expect(whole.result.message?.tool_calls?.[0]?.id).toBe('rh');
    expect(JSON.parse(whole.passed).candidates[0].content.parts[0].functionCall.id).toBe('rh');
  });
});

describe('a recorded message on the Gemini wire', () => {
  it('is written as server-sent events Gemini CLI reads, and reads back as the same message', () => {
    const message = {
      role: 'assistant' as const,
      content: 'Making it.',
      reasoning_content: 'The user wants a file.',
      tool_calls: [
        {
          id: 'rh_4',
          type: 'function' as const,
          function: { name: 'write_file', arguments: '{"file_path":"a.txt","content":"x\\n"}' },
        },
      ],
    };
    expect(modelParts(message)).toEqual([
      { text: 'The user wants a file.', thought: true },
      { text: 'Making it.' },
      { functionCall: { id: 'rh_4', name: 'write_file', args: { file_path: 'a.txt', content: 'x\n' } } },
    ]);
    let written = '';
    let status = 0;
    const res = {
      writeHead: (code: number) => {
        status = code;
        return res;
      },
      write: (chunk: string) => {
        written += chunk;
        return true;
      },
      end: (chunk?: string) => {
        written += chunk ?? '';
        return res;
      },
    } as unknown as ServerResponse;
    writeGeminiStream(res, message, 'gemini-2.5-pro', { prompt_tokens: 10, completion_tokens: 3 });
    expect(status).toBe(200);
    const assembler = new GeminiAssembler(() => 'unused');
    assembler.begin(200, true);
    assembler.push(Buffer.from(written));
    assembler.end();
    const read = assembler.result();
    expect(read.error).toBeUndefined();
    expect(read.message?.content).toBe('Making it.');
    expect(read.message?.tool_calls).toEqual(message.tool_calls);
    expect(read.usage).toEqual({ prompt_tokens: 10, completion_tokens: 3 });
  });
});
