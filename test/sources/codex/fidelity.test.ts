// What the model saw, against what the store rebuilds: every request the real Codex CLI 0.169.0 sent in the
// fixture's runs (test/fixtures/real/codex-0.169.0/requests-*.jsonl, logged by the scripted server) is matched
// with the turn of the stored session it was for, and its `input` compared with that turn's context item by
// item — roles, order, whole texts, call names, ids and arguments, outputs, reasoning. A compaction request is
// the turn of a compaction session; a fork's turns hold the parent's history.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/model/session.js';
import { type Turn, turns } from '../../../src/model/turns.js';
import { responsesWire } from '../../../src/replay/responses.js';
import { codex } from '../../../src/sources/codex/index.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root, tempDir } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const fixture = join(root, 'test/fixtures/real/codex-0.169.0');

interface Logged {
  step: string;
  headers: Record<string, string>;
  body: { input: Record<string, unknown>[]; tools?: unknown[] };
}

const logged = (name: string): Logged[] =>
  readFileSync(join(fixture, `requests-${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const raw = JSON.parse(line) as { step: string; headers: Record<string, string>; body_raw: string };
      return { step: raw.step, headers: raw.headers, body: JSON.parse(raw.body_raw) };
    });

const texts = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .map((c) => (typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : ''))
        .join('')
    : String(content ?? '');

/** An input item as the comparison sees it. */
function requestItem(item: Record<string, unknown>): unknown {
  switch (item.type) {
    case 'message':
      return {
        role: item.role === 'developer' ? 'system' : item.role,
        text: texts(item.content),
        ...(typeof item.phase === 'string' ? { phase: item.phase } : {}),
      };
    case 'reasoning': {
      const list = (value: unknown) => (Array.isArray(value) ? value.map((entry) => String(entry.text)) : []);
      const content = list(item.content);
      const summary = list(item.summary);
      if (content.length === 0) return { reasoning: summary.join('\n\n') };
      return { reasoning: content.join('\n\n'), ...(summary.length > 0 ? { summary } : {}) };
    }
    case 'function_call':
      return {
        call: item.call_id,
        name: item.name,
        input: JSON.parse(String(item.arguments)),
        ...(typeof item.namespace === 'string' ? { namespace: item.namespace } : {}),
      };
    case 'custom_tool_call':
      return { call: item.call_id, name: item.name, input: item.input };
    case 'tool_search_call':
      return { call: item.call_id, name: 'tool_search', input: item.arguments };
    case 'function_call_output':
    case 'custom_tool_call_output':
      return {
        output: item.call_id,
        text: typeof item.output === 'string' ? item.output : texts(item.output),
      };
    case 'tool_search_output':
      return { output: item.call_id };
    default:
      return { type: item.type };
  }
}

/** A stored context as the same items: an assistant message is its parts in order. */
function contextItems(context: readonly Message[]): unknown[] {
  return context.flatMap((message): unknown[] => {
    if (message.role === 'tool')
      return message.parts.flatMap((part) =>
        part.type !== 'tool_result'
          ? []
          : part.name === 'tool_search'
            ? [{ output: part.callId }]
            : [
                {
                  output: part.callId,
                  text: typeof part.output === 'string' ? part.output : texts(part.output),
                },
              ],
      );
    if (message.role === 'assistant')
      return message.parts.map((part) => {
        if (part.type === 'reasoning')
          return { reasoning: part.text, ...(part.summary ? { summary: part.summary } : {}) };
        if (part.type === 'tool_call')
          return {
            call: part.id,
            name: part.name,
            input: part.input,
            ...(part.namespace ? { namespace: part.namespace } : {}),
          };
        if (part.type === 'text')
          return { role: 'assistant', text: part.text, ...(part.phase ? { phase: part.phase } : {}) };
        return { type: part.type };
      });
    return [
      { role: message.role, text: message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('') },
    ];
  });
}

const store = tempStore();
const sessions = new SessionStore(store.db);
afterAll(() => store.close());
beforeAll(() => {
  const [summary] = ingest(store.db, [join(fixture, 'sessions')]);
  expect(summary?.warnings).toEqual([]);
  // Every line type of 0.169 is known: nothing is left unread but what holds nothing the model saw.
  expect(summary?.notes).toEqual([]);
});

/** The stored turns of a session (its own, inherited history in their contexts), found by thread id. */
function turnsOf(thread: string, kind?: string): Turn[] {
  const row = [...sessions.list()].find((r) => r.source_id.startsWith(thread) && (!kind || r.kind === kind));
  if (!row) throw new Error(`no session for ${thread}`);
  const loaded = sessions.load(row.id);
  return [...turns(loaded?.session.messages ?? [])].filter((turn) => turn.messageIndex >= (loaded?.own ?? 0));
}

const main = '01a23320-421e-78b0-966b-1e7637ec5e5c';
const forkFile = 'rollout-2026-12-01T19-41-31-01a23320-66b5-76d1-afb1-947b8c426391.jsonl';
const cases: { log: string; thread: string; kind?: string; steps: string[] }[] = [
  {
    log: 'main',
    thread: main,
    kind: 'main',
    steps: ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'b1', 'b2', 'b3', 'c1', 'c2', 'c3', 'c4', 'c5'],
  },
  { log: 'main', thread: `${main}/compaction-`, kind: 'compaction', steps: ['bc'] },
  { log: 'main', thread: '01a23320-5d28-7c22-b1ae-cc6e19341a1d', steps: ['k1', 'k2'] },
  { log: 'fork', thread: '01a23320-66b5-76d1-afb1-947b8c426391', steps: ['f1', 'f2'] },
  { log: 'forkctx', thread: '01a23320-6ee9-7f82-8926-0c55be86fb92', steps: ['p1', 'p2', 'p3', 'p4'] },
  { log: 'forkctx', thread: '01a23320-72b7-7c22-b988-e5ce89494a39', steps: ['k1'] },
];

describe('Codex 0.169.0: every request the model received, against the stored turn it was for', () => {
  it('covers every request of the three runs exactly once', () => {
    const covered = cases.flatMap((c) => c.steps.map((step) => `${c.log}/${step}`)).sort();
    const all = ['main', 'fork', 'forkctx']
      .flatMap((log) => logged(log).map((r) => `${log}/${r.step}`))
      .sort();
    expect(covered).toEqual(all);
  });

  for (const { log, thread, kind, steps } of cases)
    it(`${log}: ${steps.join(', ')} (${kind ?? 'session'} ${thread.slice(0, 13)}…)`, () => {
      const requests = logged(log).filter((r) => steps.includes(r.step));
      const stored = turnsOf(thread, kind);
      expect(stored).toHaveLength(requests.length);
      for (const [index, request] of requests.entries()) {
        const turn = stored[index] as Turn;
        expect(contextItems(turn.context), request.step).toEqual(request.body.input.map(requestItem));
      }
    });

  it('rebuilds each request’s input on the Responses wire, item for item but the ids and statuses Codex adds', () => {
    const bare = (item: Record<string, unknown>): Record<string, unknown> => {
      const { id: _id, status: _status, ...rest } = item;
      return rest;
    };
    for (const { log, thread, kind, steps } of cases) {
      const requests = logged(log).filter((r) => steps.includes(r.step));
      const stored = turnsOf(thread, kind);
      for (const [index, request] of requests.entries()) {
        const wire = responsesWire((stored[index] as Turn).context, []);
        expect(wire.body.input, `${log}/${request.step}`).toEqual(request.body.input.map(bare));
      }
    }
  });

  it('tells the prompts a person typed by 0.169’s item_completed UserMessage events, not by their text', () => {
    const typed = (thread: string) => {
      const row = [...sessions.list()].find((r) => r.source_id === thread);
      return sessions
        .messages(row?.id ?? '')
        .filter((m) => m.role === 'user' && !m.injected)
        .map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''));
    };
    expect(typed(main)).toEqual([
      'Fix the greeting bug in hello.py and make sure it runs.',
      'Add a README.md that explains how to run the script.',
      'Ask a helper agent to review README.md, then tell me what changed.',
    ]);
    // The sub-agent's prompt is its parent's message; the notification of a finished sub-agent is Codex's.
    expect(typed('01a23320-5d28-7c22-b1ae-cc6e19341a1d')).toEqual([
      'Review README.md in /home/ada/projects/demo-app and reply with one sentence.',
    ]);
    expect(typed('01a23320-6ee9-7f82-8926-0c55be86fb92')).toEqual(['Count the lines of hello.py']);
  });

  it('trusts those events over the text: a typed prompt that looks like harness text, harness text that does not', () => {
    const dir = tempDir('codex-prompts-');
    try {
      const lines = readFileSync(join(fixture, 'sessions/2026/12/01', forkFile), 'utf8')
        .trim()
        .split('\n');
      const typed = '<environment_context> is what I want explained';
      const edited = lines.map((line) => line.replaceAll('Forked: list the files', typed));
      // Harness text no prefix rule knows, with no event: Codex wrote it.
      const note = JSON.stringify({
        timestamp: '2026-12-01T19:41:31.999Z',
        type: 'response_item',
        payload: {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'Heads up: the sandbox changed.' }],
        },
      });
      const file = join(dir.path, forkFile);
      writeFileSync(file, `${[...edited, note].join('\n')}\n`);
      const [session] = [...codex.parseFile(file).sessions];
      const users = (session?.messages ?? []).filter((m) => m.role === 'user');
      expect(
        users.map((m) => [
          m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''),
          m.injected === true,
        ]),
      ).toEqual([
        [typed, false],
        ['Heads up: the sandbox changed.', true],
      ]);
    } finally {
      dir.remove();
    }
  });

  it('the compaction request is a compaction: no tools offered, Codex’s prompt last, the summary its answer', () => {
    const [request] = logged('main').filter((r) => r.step === 'bc');
    expect(JSON.parse(request?.headers['x-codex-turn-metadata'] ?? '{}').request_kind).toBe('compaction');
    expect(request?.body.tools).toEqual([]);
    const [turn] = turnsOf(`${main}/compaction-`, 'compaction');
    expect(turn?.response.parts).toEqual([
      {
        type: 'text',
        text: 'Summary: hello.py greeting fixed (prints "Hello, world!"); README.md added with run instructions; git status shows README.md untracked and hello.py modified. Next: confirm README content.',
      },
    ]);
    // Not a turn of the conversation: the main thread's turns are its 14 requests of kind turn.
    expect(
      turnsOf(main, 'main').map((t) =>
        t.response.parts.some((p) => p.type === 'text' && p.text.startsWith('Summary:')),
      ),
    ).not.toContain(true);
  });
});
