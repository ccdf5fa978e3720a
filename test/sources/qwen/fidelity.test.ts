// What the model saw, against what the store rebuilds: every request the real Qwen Code 0.24.4 sent in the
// fixture's four runs (test/fixtures/real/qwen-code-0.24.4/requests.jsonl, logged by the scripted server) is
// either a side call, told by its content, or an agent turn, matched in order with the stored turns and compared
// message by message: user texts (minus the <system-reminder> blocks Qwen prepends, which the log does not hold),
// assistant texts and reasoning, tool calls (ids, names, arguments), tool results, order. The answers and the
// usage of each request are compared with the stored response too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/model/session.js';
import { type Turn, turns } from '../../../src/model/turns.js';
import { ingest, type PathSummary } from '../../../src/sources/ingest.js';
import { summaryAcknowledgement } from '../../../src/sources/qwen/parse.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const fixture = join(root, 'test/fixtures/real/qwen-code-0.24.4');

interface ChatMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  reasoning_content?: string;
}
interface Logged {
  seq: number;
  body: { messages: ChatMessage[]; tools: unknown[] };
  answer: { text: string; reasoning: string; calls: { id: string; name: string; input: unknown }[] };
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens?: number };
  };
}

/** The streamed answer put together: text, reasoning, tool calls (arguments come in pieces), and the usage. */
function answerOf(sse: string): Pick<Logged, 'answer' | 'usage'> {
  const answer: Logged['answer'] = { text: '', reasoning: '', calls: [] };
  const raw: { id: string; name: string; args: string }[] = [];
  let usage: Logged['usage'] = { prompt_tokens: -1, completion_tokens: -1 };
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6));
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      answer.text += delta.content ?? '';
      answer.reasoning += delta.reasoning_content ?? '';
      for (const call of delta.tool_calls ?? []) {
        raw[call.index] ??= { id: '', name: '', args: '' };
        const entry = raw[call.index] as { id: string; name: string; args: string };
        entry.id += call.id ?? '';
        entry.name += call.function?.name ?? '';
        entry.args += call.function?.arguments ?? '';
      }
    }
  }
  answer.calls = raw.map((c) => ({ id: c.id, name: c.name, input: JSON.parse(c.args) }));
  return { answer, usage };
}

const logged: Logged[] = readFileSync(join(fixture, 'requests.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => {
    const raw = JSON.parse(line) as { seq: number; body: string; result: { response: string } };
    return { seq: raw.seq, body: JSON.parse(raw.body), ...answerOf(raw.result.response) };
  });

const textsOf = (content: ChatMessage['content']): string[] =>
  typeof content === 'string' ? [content] : (content ?? []).map((part) => part.text ?? '');

/** How the harness text Qwen adds to a user message is told: a text part that is one whole reminder block. */
const isReminder = (text: string): boolean =>
  text.startsWith('<system-reminder>') && text.trimEnd().endsWith('</system-reminder>');

/** What a request's side call is, by its content; undefined for an agent turn. */
function sideCall(request: Logged): string | undefined {
  const system = textsOf(request.body.messages[0]?.content).join('');
  const last = textsOf(request.body.messages.at(-1)?.content).join('');
  if (system.startsWith('You are now acting as the managed memory extraction subagent'))
    return 'memory extractor';
  if (last.startsWith('You are the component that summarizes a conversation')) return 'summarizer';
  if (/^Generate a (short )?title/i.test(last)) return 'title';
  return undefined;
}

/** A request's conversation as the comparison sees it (the system prompt is not in the log). */
function requestItems(messages: ChatMessage[]): unknown[] {
  return messages.slice(1).flatMap((message): unknown[] => {
    if (message.role === 'tool')
      return [{ result: message.tool_call_id, text: textsOf(message.content).join('') }];
    if (message.role === 'assistant')
      return [
        {
          role: 'assistant',
          text: textsOf(message.content).join(''),
          reasoning: message.reasoning_content ?? '',
          calls: (message.tool_calls ?? []).map((call) => ({
            id: call.id,
            name: call.function.name,
            input: JSON.parse(call.function.arguments),
          })),
        },
      ];
    return [
      {
        role: message.role,
        text: textsOf(message.content)
          .filter((text) => !isReminder(text))
          .join(''),
      },
    ];
  });
}

const joined = (message: Message, type: 'text' | 'reasoning'): string =>
  message.parts.map((part) => (part.type === type ? part.text : '')).join('');

/** A stored context as the same items: each tool result on its own, as the chat wire sends it. */
function contextItems(context: readonly Message[]): unknown[] {
  return context.flatMap((message): unknown[] => {
    if (message.role === 'tool')
      return message.parts.flatMap((part) =>
        part.type === 'tool_result' ? [{ result: part.callId, text: part.output }] : [],
      );
    if (message.role === 'assistant')
      return [
        {
          role: 'assistant',
          text: joined(message, 'text'),
          reasoning: joined(message, 'reasoning'),
          calls: message.parts.flatMap((part) =>
            part.type === 'tool_call' ? [{ id: part.id, name: part.name, input: part.input }] : [],
          ),
        },
      ];
    return [{ role: message.role, text: joined(message, 'text') }];
  });
}

const store = tempStore();
const sessions = new SessionStore(store.db);
let summary: PathSummary | undefined;
let stored: Turn[] = [];
let messages: Message[] = [];
afterAll(() => store.close());
beforeAll(() => {
  [summary] = ingest(store.db, [join(fixture, 'home/.qwen/projects')]);
  const [row] = [...sessions.list()];
  const loaded = sessions.load(row?.id ?? '');
  messages = loaded?.session.messages ?? [];
  stored = [...turns(messages)];
});

const agentTurns = () => logged.filter((request) => sideCall(request) === undefined);

describe('Qwen Code 0.24.4: every request the model received, against the stored turn it was for', () => {
  it('reads the session without a warning; the side calls are counted, not turns', () => {
    expect(summary?.warnings).toEqual([]);
    expect(summary?.sessions.new).toBe(1);
    expect(summary?.notes).toEqual([
      expect.stringContaining(
        '3 side request(s) are not turns (compaction summarizer ×2, managed-auto-memory-extractor ×1): 54655 input and 101 output tokens',
      ),
    ]);
  });

  it('tells the side calls by their content: two summarizers and the memory extractor, nine agent turns', () => {
    expect(logged.map((request) => [request.seq, sideCall(request) ?? 'turn'])).toEqual([
      [1, 'turn'],
      [2, 'turn'],
      [3, 'turn'],
      [4, 'turn'],
      [5, 'turn'],
      [6, 'turn'],
      [7, 'turn'],
      [8, 'summarizer'],
      [9, 'turn'],
      [10, 'turn'],
      [11, 'memory extractor'],
      [12, 'summarizer'],
    ]);
    expect(stored).toHaveLength(agentTurns().length);
  });

  it('rebuilds each agent turn’s messages in content and order, Qwen’s acknowledgement of a summary included', () => {
    let acknowledged = 0;
    for (const [index, request] of agentTurns().entries()) {
      const items = requestItems(request.body.messages);
      // After a compaction Qwen sends its fixed answer to the summary right after it; the log holds it only
      // inside the compression record, and the store keeps it there as harness text.
      const ack = items.findIndex(
        (item) =>
          (item as { text?: string; role?: string }).role === 'assistant' &&
          (item as { text: string }).text === summaryAcknowledgement,
      );
      const compacted = (stored[index] as Turn).context.some((message) => message.compaction);
      expect(ack >= 0, `seq ${request.seq}`).toBe(compacted);
      if (ack >= 0) {
        acknowledged++;
        expect((items[ack - 1] as { text: string }).text, `seq ${request.seq}`).toMatch(/^<state_snapshot>/);
      }
      expect(contextItems((stored[index] as Turn).context), `seq ${request.seq}`).toEqual(items);
    }
    expect(acknowledged).toBeGreaterThan(0);
  });

  it('stores what each request was answered: text, reasoning, tool calls', () => {
    for (const [index, request] of agentTurns().entries()) {
      const { response } = stored[index] as Turn;
      expect(
        {
          text: joined(response, 'text'),
          reasoning: joined(response, 'reasoning'),
          calls: response.parts.flatMap((part) =>
            part.type === 'tool_call' ? [{ id: part.id, name: part.name, input: part.input }] : [],
          ),
        },
        `seq ${request.seq}`,
      ).toEqual(request.answer);
    }
  });

  it('takes each turn’s usage from its ui_telemetry record, equal to what the server answered', () => {
    for (const [index, request] of agentTurns().entries())
      expect((stored[index] as Turn).response.usage, `seq ${request.seq}`).toEqual({
        inputTokens: request.usage.prompt_tokens,
        outputTokens: request.usage.completion_tokens,
        cacheReadTokens: request.usage.prompt_tokens_details?.cached_tokens ?? 0,
      });
    // The summarizer's request is the compaction's.
    const summaries = messages.filter((message) => message.compaction);
    const summarizers = logged.filter((request) => sideCall(request) === 'summarizer');
    expect(summaries.map((message) => message.usage?.inputTokens)).toEqual(
      summarizers.map((request) => request.usage.prompt_tokens),
    );
  });

  it('strips exactly the reminder blocks: the first prompt had four, the summary three after a resume', () => {
    const [first] = logged;
    const user = first?.body.messages[1];
    expect(textsOf(user?.content).map(isReminder)).toEqual([true, true, true, true, false]);
    const resumed = logged.find((request) => request.seq === 10);
    expect(textsOf(resumed?.body.messages[1]?.content).map(isReminder)).toEqual([true, true, true, false]);
    // A prompt that only mentions a reminder is the user's text.
    expect(isReminder('please explain <system-reminder> tags')).toBe(false);
    expect(isReminder('<system-reminder>\nx\n</system-reminder> and more')).toBe(false);
  });
});
