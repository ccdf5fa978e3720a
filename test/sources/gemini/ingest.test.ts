// Ingesting Gemini CLI logs again: an unchanged tree reads nothing; a log that grew is read whole again (an upsert
// format: a later line may change an earlier message), and the store adds only the new messages when the earlier
// ones are unchanged, or stores the session again when the last message was rewritten (its tool calls written).
import { appendFileSync, cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingest, type PathSummary } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const store = tempStore();
afterAll(() => store.close());
const tree = join(store.dir, 'tmp');
cpSync(join(root, 'test/fixtures/real/gemini-cli-0.61.0/home/.gemini/tmp'), tree, { recursive: true });
const file = join(tree, 'demo-app/chats/session-2026-12-01T19-48-76b09eaf.jsonl');
const sessions = new SessionStore(store.db);
const run = () => ingest(store.db, [tree])[0] as PathSummary;
const stored = () => {
  const row = [...sessions.list()].find((r) => r.source_id === '76b09eaf-4445-4947-91a8-66c8ca9fde7d');
  return sessions.messages(row?.id ?? '');
};
const line = (record: unknown) => `${JSON.stringify(record)}\n`;
const answer = {
  id: 'f0f0f0f0-0000-4000-8000-000000000002',
  timestamp: '2026-12-01T19:58:00.000Z',
  type: 'gemini',
  content: 'Reading notes.txt.',
  model: 'gemini-3.8-flash',
};

describe('Gemini CLI logs, ingested again', () => {
  it('reads nothing of an unchanged tree', () => {
    const first = run();
    expect(first.files.read).toBe(4);
    expect(first.sessions.new).toBe(3);
    const again = run();
    expect(again.files).toEqual({
      read: 0,
      continued: 0,
      unchanged: 4,
      ignored: first.files.ignored,
      failed: 0,
    });
    expect(again.messages).toBe(0);
    expect(again.sessions.unchanged).toBe(3);
  });

  it('adds only the new messages of a log that grew by a prompt and an answer', () => {
    const before = stored().length;
    appendFileSync(
      file,
      line({
        id: 'f0f0f0f0-0000-4000-8000-000000000001',
        timestamp: '2026-12-01T19:58:00.000Z',
        type: 'user',
        content: [{ text: 'now read notes.txt' }],
      }) + line(answer),
    );
    const grown = run();
    expect(grown.files.read).toBe(1);
    expect(grown.sessions).toEqual({ new: 0, updated: 1, unchanged: 2 });
    expect(grown.messages).toBe(2);
    expect(grown.rewritten).toEqual({ messages: 0, toolCalls: 0 });
    expect(stored()).toHaveLength(before + 2);
  });

  it('stores the session again when the last message is written anew with its tool calls, and its result once', () => {
    const id = 'read_file__read_file_1796154999999_0';
    const call = {
      id,
      name: 'read_file',
      args: { file_path: '/home/ada/projects/demo-app/notes.txt' },
      result: [
        { functionResponse: { id, name: 'read_file', response: { output: 'alpha\nbeta TODO gamma\n' } } },
      ],
      status: 'success',
    };
    appendFileSync(
      file,
      line({ ...answer, toolCalls: [call] }) +
        line({ id: 'f0f0f0f0-0000-4000-8000-000000000003', type: 'user', content: call.result }),
    );
    const rewritten = run();
    expect(rewritten.sessions.updated).toBe(1);
    expect(rewritten.rewritten.toolCalls).toBe(2);
    const messages = stored();
    expect(messages.at(-1)?.parts).toEqual([
      {
        type: 'tool_result',
        callId: 'read_file_1796154999999_0',
        name: 'read_file',
        output: 'alpha\nbeta TODO gamma\n',
        isError: false,
      },
    ]);
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(15);
  });

  it('reads a torn last line once it is complete', () => {
    const record = line({
      id: 'f0f0f0f0-0000-4000-8000-000000000004',
      type: 'user',
      content: [{ text: 'thanks' }],
    });
    appendFileSync(file, record.slice(0, 20));
    const torn = run();
    expect(torn.warnings.map((w) => [w.line, w.message])).toEqual([
      [16, 'last line is incomplete (still being written?); not read yet'],
    ]);
    expect(torn.messages).toBe(0);
    appendFileSync(file, record.slice(20));
    const whole = run();
    expect(whole.warnings).toEqual([]);
    expect(whole.messages).toBe(1);
  });
});
