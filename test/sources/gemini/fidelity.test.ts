// What the model saw, against what the store rebuilds: every agent turn the real Gemini CLI 0.61.0 sent in the
// fixture's runs (the `:streamGenerateContent` requests of test/fixtures/real/gemini-cli-0.61.0/requests.jsonl,
// logged by the scripted server) is matched with the turn of the stored session it was for, and its `contents`
// compared with that turn's context: roles, order, whole texts, call names, arguments and wire ids, every
// functionResponse payload. The session context the CLI writes as its own first message is sent merged with the
// first prompt (consecutive user contents are one on the wire): both sides merge them the same way.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Message, outputText } from '../../../src/model/session.js';
import { type Turn, turns } from '../../../src/model/turns.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const fixture = join(root, 'test/fixtures/real/gemini-cli-0.61.0');

type Part = Record<string, unknown>;
interface Content {
  role: string;
  parts: Part[];
}
interface Logged {
  seq: number;
  url: string;
  body: { contents: Content[]; systemInstruction?: unknown; tools?: unknown };
}

const logged: Logged[] = readFileSync(join(fixture, 'requests.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => {
    const raw = JSON.parse(line) as { seq: number; url: string; body: string };
    return { seq: raw.seq, url: raw.url, body: JSON.parse(raw.body) };
  });
const agentTurns = logged.filter((r) => r.url.includes(':streamGenerateContent'));

/** The acknowledgement the CLI writes after a state snapshot (a model content it makes itself, not a turn). */
const acknowledgement = 'Got it. Thanks for the additional context!';

function merged(contents: Content[]): Content[] {
  const out: Content[] = [];
  for (const content of contents) {
    const last = out.at(-1);
    if (last && last.role === content.role) last.parts.push(...content.parts);
    else out.push({ role: content.role, parts: [...content.parts] });
  }
  return out;
}

/**
 * A request's contents as the comparison sees them. The functionResponses the CLI sends twice after a resume (its
 * bug: from `toolCalls[].result` and again from the logged result message) are left out and counted, for a test
 * to pin; so are the acknowledgements of a snapshot counted (the store keeps each as an injected assistant
 * message that the compaction keeps: contexts hold it, though it is no turn).
 */
function requestContents(contents: Content[]): { contents: Content[]; duplicates: number; acks: number } {
  let duplicates = 0;
  let acks = 0;
  const kept: Content[] = [];
  for (const content of contents) {
    const seen = new Set<string>();
    const parts: Part[] = [];
    for (const part of content.parts) {
      if (part.thought === true) throw new Error('a thought was sent back');
      if (typeof part.text === 'string') parts.push({ text: part.text });
      else if (part.functionCall) {
        const call = part.functionCall as { id?: string; name: string; args: unknown };
        parts.push({ call: call.name, args: call.args, ...(call.id ? { id: call.id } : {}) });
      } else if (part.functionResponse) {
        const response = part.functionResponse as { id: string; name: string; response: unknown };
        if (seen.has(response.id)) {
          duplicates++;
          continue;
        }
        seen.add(response.id);
        parts.push({ result: response.id, name: response.name, response: response.response });
      } else parts.push({ unknown: Object.keys(part) });
    }
    if (content.role === 'model' && parts.length === 1 && parts[0]?.text === acknowledgement) acks++;
    kept.push({ role: content.role, parts });
  }
  return { contents: merged(kept), duplicates, acks };
}

/** A stored context as Gemini contents: tool results are user parts, reasoning is never sent back. */
function contextContents(context: readonly Message[], wireCallIds: boolean): Content[] {
  return merged(
    context.map((message) => ({
      role: message.role === 'assistant' ? 'model' : 'user',
      parts: message.parts.flatMap((part): Part[] => {
        if (part.type === 'text') return [{ text: part.text }];
        if (part.type === 'tool_call')
          return [{ call: part.name, args: part.input, ...(wireCallIds ? { id: part.id } : {}) }];
        if (part.type === 'tool_result') {
          const text = outputText(part.output);
          return [
            {
              result: part.callId,
              name: part.name,
              response: part.isError ? { error: text } : { output: text },
            },
          ];
        }
        if (part.type === 'reasoning') return [];
        return [{ unknown: part.type }];
      }),
    })),
  );
}

const store = tempStore();
const sessions = new SessionStore(store.db);
let notes: string[] = [];
afterAll(() => store.close());
beforeAll(() => {
  const [summary] = ingest(store.db, [join(fixture, 'home/.gemini/tmp')]);
  expect(summary?.warnings).toEqual([]);
  notes = summary?.notes ?? [];
});

/** The stored turns of a session, found by the agent's own id. */
function turnsOf(sourceId: string): Turn[] {
  const row = [...sessions.list()].find((r) => r.source_id === sourceId);
  if (!row) throw new Error(`no session ${sourceId}`);
  const loaded = sessions.load(row.id);
  return [...turns(loaded?.session.messages ?? [], loaded?.own ?? 0)];
}

const cases = [
  { session: '76b09eaf-4445-4947-91a8-66c8ca9fde7d', seqs: [2, 6], wireCallIds: true },
  // The sub-agent's model calls carry no id on the wire (its results do: `<agentId>#<turn>-<n>`).
  { session: '2e99d745-5b87-4e8a-90da-e8fe744ed319', seqs: [4, 5], wireCallIds: false },
  {
    session: '9c1bacd1-ce8d-4c25-a459-c8f8662df602',
    seqs: [8, 9, 10, 11, 12, 13, 15, 18, 21],
    wireCallIds: true,
  },
];

describe('Gemini CLI 0.61.0: every agent-turn request, against the stored turn it was for', () => {
  it('covers every :streamGenerateContent request exactly once; the others are side calls (router, summarizer)', () => {
    expect(cases.flatMap((c) => c.seqs).sort((a, b) => a - b)).toEqual(agentTurns.map((r) => r.seq));
    expect(agentTurns).toHaveLength(13);
    for (const side of logged.filter((r) => !agentTurns.includes(r)))
      expect(side.url, String(side.seq)).toMatch(/:generateContent$/);
  });

  for (const { session, seqs, wireCallIds } of cases)
    it(`${session.slice(0, 8)}: requests ${seqs.join(', ')} equal the stored contexts, part for part`, () => {
      const stored = turnsOf(session);
      expect(stored).toHaveLength(seqs.length);
      for (const [index, seq] of seqs.entries()) {
        const request = agentTurns.find((r) => r.seq === seq) as Logged;
        const expected = requestContents(request.body.contents).contents;
        expect(contextContents((stored[index] as Turn).context, wireCallIds), `seq ${seq}`).toEqual(expected);
      }
    });

  it('sends the session context merged into the first prompt, as the store keeps it: an injected message of its own', () => {
    const [first] = turnsOf('76b09eaf-4445-4947-91a8-66c8ca9fde7d');
    const [context, prompt] = first?.context ?? [];
    expect(context?.attachment).toBe('session_context');
    expect(context?.injected).toBe(true);
    expect(prompt?.injected).toBeUndefined();
    const wire = (agentTurns[0] as Logged).body.contents[0] as Content;
    expect(wire.parts.map((p) => String(p.text).slice(0, 17))).toEqual([
      '<session_context>',
      'TASK-S: delegate ',
    ]);
    expect(context?.parts).toEqual([{ type: 'text', text: wire.parts[0]?.text }]);
  });

  it('keeps each result once where the resumed CLI sent every earlier result twice (seq 15), and the snapshot’s acknowledgement as no turn', () => {
    const counted = (seq: number) =>
      requestContents((agentTurns.find((r) => r.seq === seq) as Logged).body.contents);
    expect(counted(13).duplicates).toBe(0);
    // The 9 results of TASK-A, each twice after the resume.
    expect(counted(15).duplicates).toBe(9);
    expect([counted(18).acks, counted(21).acks]).toEqual([1, 1]);
    const [, , , , , , , afterSnapshot] = turnsOf('9c1bacd1-ce8d-4c25-a459-c8f8662df602');
    const summary = afterSnapshot?.context[1];
    expect(summary?.compaction).toBe(true);
    expect(afterSnapshot?.context[2]).toMatchObject({
      role: 'assistant',
      injected: true,
      parts: [{ type: 'text', text: acknowledgement }],
    });
    expect(summary?.parts).toEqual([
      { type: 'text', text: '<state_snapshot>scripted summary of the conversation so far</state_snapshot>' },
    ]);
  });

  it('never sends thoughts back, while the store keeps them as reasoning of the turn that had them', () => {
    const all = agentTurns.flatMap((r) => r.body.contents.flatMap((c) => c.parts));
    expect(all.filter((p) => p.thought === true)).toEqual([]);
    const [first] = turnsOf('9c1bacd1-ce8d-4c25-a459-c8f8662df602');
    expect(first?.response.parts[0]).toEqual({
      type: 'reasoning',
      text: '**Exploring the project** I will read the README and list the workspace.',
    });
  });

  it('says that nothing beyond the conversation is in the log: every request had a system instruction and tools', () => {
    for (const request of agentTurns) {
      expect(request.body.systemInstruction).toBeDefined();
      expect(request.body.tools).toBeDefined();
    }
    expect(notes.filter((note) => note.includes('19-50-9c1bacd1'))).toEqual([
      expect.stringContaining('no conversation in the file'),
    ]);
  });
});
