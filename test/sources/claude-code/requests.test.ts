// Every request the real Claude Code 2.1.328 sent (test/fixtures/real/claude-code-2.1.328/requests.jsonl, logged by
// the model server) against what the store rebuilds for the matching turn from the transcript's request records.
// The request ↔ turn mapping is made here from the raw lines, not by the adapter: the server's answer carries the
// message id that the transcript's assistant lines repeat; the first of those lines is the response's native id.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageHash, type TurnRequest, type WireMessage, wireBody } from '../../../src/model/request.js';
import { splitTurns } from '../../../src/model/turns.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const fixture = join(root, 'test', 'fixtures', 'real', 'claude-code-2.1.328');
const projects = join(fixture, 'projects');

interface Logged {
  seq: number;
  kind: 'scripted' | 'compaction';
  label: string;
  body: Record<string, unknown> & { system: unknown[]; tools: unknown[]; messages: WireMessage[] };
  headers: Record<string, string>;
  answer: { id: string };
}

const logged: Logged[] = readFileSync(join(fixture, 'requests.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const entry = JSON.parse(line) as Omit<Logged, 'body'> & { raw: string };
    return { ...entry, body: JSON.parse(entry.raw) };
  });

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.jsonl') ? [path] : [];
  });
}

/** message.id of an API response → uuid of its first assistant line, over every transcript. */
const firstLineOf = new Map<string, string>();
for (const file of files(projects))
  for (const text of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const line = JSON.parse(text) as { type: string; uuid?: string; message?: { id?: string } };
    if (line.type === 'assistant' && line.message?.id && line.uuid && !firstLineOf.has(line.message.id))
      firstLineOf.set(line.message.id, line.uuid);
  }

let store: ReturnType<typeof tempStore>;
const requests = new Map<string, TurnRequest>();
const turnResponses = new Set<string>();

beforeAll(() => {
  store = tempStore();
  const [summary] = ingest(store.db, [projects]);
  expect(summary?.warnings).toEqual([]);
  // The record types are known now: nothing is reported as unknown.
  expect(summary?.notes.filter((note) => note.includes('unknown type'))).toEqual([]);
  const sessions = new SessionStore(store.db);
  for (const id of sessions.allIds()) {
    const loaded = sessions.load(id);
    if (!loaded) continue;
    for (const turn of splitTurns(loaded.session.messages))
      if (turn.response.nativeId) turnResponses.add(turn.response.nativeId);
    for (const [response, request] of sessions.loadRequests(id).byResponse) requests.set(response, request);
  }
});
afterAll(() => store.close());

/** The logged body without what Claude Code does not record: its billing-header block, metadata, stream. */
function recordedPart(body: Logged['body']) {
  const { metadata: _metadata, stream: _stream, system, ...rest } = body;
  const [header, ...blocks] = system as { text?: string }[];
  expect(header?.text).toMatch(/^x-anthropic-billing-header: cc_version=2\.1\.328\./);
  return { ...rest, system: blocks };
}

const scripted = logged.filter((entry) => entry.kind === 'scripted');

describe('Claude Code 2.1.328: each turn’s request rebuilt from the transcript', () => {
  it('the log holds 29 model turns and 2 compaction calls', () => {
    expect(scripted).toHaveLength(29);
    expect(logged.filter((entry) => entry.kind === 'compaction').map((entry) => entry.label)).toEqual([
      'compaction-A',
      'compaction-B',
    ]);
  });

  it.each(scripted.map((entry) => [entry.label, entry] as const))(
    '%s: system, tools, messages and params equal the body the model received',
    (_label, entry) => {
      const response = firstLineOf.get(entry.answer.id);
      expect(response, 'the answer is in a transcript').toBeDefined();
      expect(turnResponses.has(response as string), 'the response is a stored model turn').toBe(true);
      const request = requests.get(response as string);
      expect(request?.fidelity).toBe('exact');
      expect(request?.missing).toEqual([]);
      const { body, betas } = wireBody(request as TurnRequest);
      // Byte-equal in content: cache breakpoints and the string-or-blocks form come back from the record.
      expect(body).toEqual(recordedPart(entry.body));
      expect(betas.join(',')).toBe(entry.headers['anthropic-beta'] ?? entry.headers['Anthropic-Beta']);
      // Each message really is the one its tail hash names.
      for (const message of (request as TurnRequest).messages)
        expect(messageHash({ role: message.role, content: message.content, ...(message.extra ?? {}) })).toBe(
          message.hash,
        );
    },
  );

  it('no compaction call has a request record (2.1.328 writes none)', () => {
    const answered = new Set(
      logged.filter((entry) => entry.kind === 'compaction').map((entry) => firstLineOf.get(entry.answer.id)),
    );
    expect([...answered]).toEqual([undefined]);
    expect(requests.size).toBe(29);
  });

  it('marks who wrote each message: the first turn is harness text, the user’s prompt and a system message', () => {
    const first = scripted[0] as Logged;
    const request = requests.get(firstLineOf.get(first.answer.id) as string) as TurnRequest;
    expect(request.messages.map((m) => [m.role, m.by, m.injectedBlocks, m.origin])).toEqual([
      ['user', 'user', [0, 1], 'blob'],
      ['system', 'harness', undefined, 'blob'],
    ]);
    const later = requests.get(firstLineOf.get((scripted[2] as Logged).answer.id) as string) as TurnRequest;
    expect(later.messages.map((m) => m.by)).toEqual(['user', 'harness', 'model', 'tools', 'model', 'tools']);
  });
});
