// A Codex 0.169 fork (`codex exec fork`): its rollout copies nothing of its parent's, it points at it
// (`session_meta.history_base {thread_id, end_ordinal_exclusive}`). What the fork's model saw is in the request
// log of the real run (test/fixtures/real/codex-0.169.0/requests-fork.jsonl): the parent's whole history, then
// the fork's own prompt. The stored fork must hold the same, whichever rollout is ingested first.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/model/session.js';
import { turns } from '../../../src/model/turns.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root, tempDir } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const fixture = join(root, 'test/fixtures/real/codex-0.169.0');
const rollouts = join(fixture, 'sessions/2026/12/01');
const named = (thread: string) => readdirSync(rollouts).find((name) => name.includes(thread)) as string;
const parentThread = '01a23320-421e-78b0-966b-1e7637ec5e5c';
const forkThread = '01a23320-66b5-76d1-afb1-947b8c426391';

/** The request bodies the fork's model received, in order. */
const requests = readFileSync(join(fixture, 'requests-fork.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(JSON.parse(line).body_raw) as { input: Record<string, unknown>[] });

/** One item of what the model saw, as text: a message's role and whole text, a call or output by call_id. */
function requestItems(input: Record<string, unknown>[]): string[] {
  return input.map((item) => {
    if (item.type === 'message') {
      const role = item.role === 'developer' ? 'system' : String(item.role);
      const text = (item.content as { text?: string }[]).map((c) => c.text ?? '').join('');
      return `${role}: ${text}`;
    }
    if (item.type === 'reasoning') return 'reasoning';
    if (typeof item.call_id === 'string')
      return `${String(item.type).endsWith('_output') ? 'output' : 'call'} ${item.call_id}`;
    return String(item.type);
  });
}

/** The same of a stored context: an assistant message is its items (reasoning, text, calls) in order. */
function contextItems(context: Message[]): string[] {
  return context.flatMap((message) => {
    if (message.role === 'tool')
      return message.parts.flatMap((part) => (part.type === 'tool_result' ? [`output ${part.callId}`] : []));
    if (message.role === 'assistant')
      return message.parts.map((part) =>
        part.type === 'reasoning'
          ? 'reasoning'
          : part.type === 'tool_call'
            ? `call ${part.id}`
            : part.type === 'text'
              ? `assistant: ${part.text}`
              : part.type,
      );
    const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
    return [`${message.role}: ${text}`];
  });
}

const dirs: ReturnType<typeof tempDir>[] = [];
afterAll(() => {
  for (const dir of dirs) dir.remove();
});

/** The two rollouts in a folder of their own, each ingested on its own, in the order given. */
function ingestInOrder(order: string[]) {
  const store = tempStore();
  const dir = tempDir('codex-fork-');
  dirs.push(dir);
  const files = order.map((thread) => {
    const to = join(dir.path, named(thread));
    copyFileSync(join(rollouts, named(thread)), to);
    return to;
  });
  const summaries = files.map((file) => ingest(store.db, [file])[0]);
  return { store, summaries, sessions: new SessionStore(store.db) };
}

const forkId = (sessions: SessionStore) => sessions.resolve(forkThread).id;

describe('a Codex 0.169 fork', () => {
  it('continues its parent: every turn of the fork saw the parent’s history, then its own', () => {
    const { store, sessions } = ingestInOrder([parentThread, forkThread]);
    try {
      const loaded = sessions.load(forkId(sessions));
      expect(loaded?.session.continues).toEqual({
        sessionId: sessions.resolve(parentThread).id,
        line: readFileSync(join(rollouts, named(parentThread)), 'utf8')
          .trim()
          .split('\n').length,
      });
      const own = [...turns(loaded?.session.messages ?? [])].filter(
        (turn) => turn.messageIndex >= (loaded?.own ?? 0),
      );
      expect(own).toHaveLength(requests.length);
      for (const [index, turn] of own.entries()) {
        // The same items in the same order, the parent's compaction summary where Codex sent it (after the
        // items it kept).
        expect(contextItems(turn.context)).toEqual(requestItems(requests[index]?.input ?? []));
      }
      // Its own messages are only its own: nothing of the parent is stored twice.
      expect(sessions.messages(forkId(sessions)).map((m) => m.role)).not.toContain('system');
    } finally {
      store.close();
    }
  });

  it('ingested before its parent: says the parent is missing, and holds its history once the parent is in', () => {
    const { store, summaries, sessions } = ingestInOrder([forkThread, parentThread]);
    try {
      const [first] = summaries;
      expect(first?.warnings.map((w) => w.message)).toEqual([
        `a fork of session ${parentThread} (the first 122 lines of its log): that log is not in the store, so this session's contexts lack the history it inherited; ingest it too, in any order`,
      ]);
      expect(summaries[1]?.warnings).toEqual([]);
      const loaded = sessions.load(forkId(sessions));
      const opening = [...turns(loaded?.session.messages ?? [])].find(
        (turn) => turn.messageIndex >= (loaded?.own ?? 0),
      );
      expect(opening?.context.length).toBeGreaterThan(20);
      expect(contextItems(opening?.context ?? []).at(-1)).toBe('user: Forked: list the files');
    } finally {
      store.close();
    }
  });

  it('sees only what its parent held when it forked, though the parent’s rollout grew since', () => {
    const dir = tempDir('codex-fork-grown-');
    dirs.push(dir);
    const store = tempStore();
    try {
      const parent = join(dir.path, named(parentThread));
      copyFileSync(join(rollouts, named(parentThread)), parent);
      mkdirSync(join(dir.path, 'fork'));
      const fork = join(dir.path, 'fork', named(forkThread));
      copyFileSync(join(rollouts, named(forkThread)), fork);
      ingest(store.db, [parent, fork]);
      const sessions = new SessionStore(store.db);
      const before = sessions.load(forkId(sessions))?.session.messages.length;
      const parentBefore = sessions.messages(sessions.resolve(parentThread).id).length;
      // The parent goes on after the fork: a new prompt and answer at its end.
      const last = readFileSync(parent, 'utf8').trim().split('\n').at(-1) as string;
      const stamp = (JSON.parse(last) as { timestamp: string }).timestamp;
      const item = (payload: unknown) => JSON.stringify({ timestamp: stamp, type: 'response_item', payload });
      const grown = [
        item({
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'And one more thing.' }],
        }),
        item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }),
      ];
      writeFileSync(parent, `${readFileSync(parent, 'utf8')}${grown.join('\n')}\n`);
      ingest(store.db, [parent]);
      expect(sessions.messages(sessions.resolve(parentThread).id)).toHaveLength(parentBefore + 2);
      expect(sessions.load(forkId(sessions))?.session.messages.length).toBe(before);
    } finally {
      store.close();
    }
  });
});
