// A data dir holding every storage generation at once, ingested through `ingest(db, [dataDir])`: each session
// is stored once, from the newest generation that has it (V2 tables > V1 tables > JSON tree > export).
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { type Part, toolResults } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { ingest } from '../../../src/sources/ingest.js';
import { opencode } from '../../../src/sources/opencode/index.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { tempDir } from '../../helpers/cli.js';
import { smallSession as sample, writeTree, writeV1, writeV2 } from '../../helpers/opencode-store.js';
import { tempStore } from '../../helpers/store.js';

const t0 = 1770000000000;

let home: ReturnType<typeof tempDir>;
let store: ReturnType<typeof tempStore>;
beforeEach(() => {
  home = tempDir('opencode-gen-');
  store = tempStore();
});
afterEach(() => {
  store.close();
  home.remove();
});

const texts = (parts: Part[]) => parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));

describe('opencode data dir with every generation', () => {
  it('unions by session id, newest generation winning, and never walks message or part files one by one', () => {
    const data = join(home.path, 'opencode');
    // tree only · tree and V1 · V1 and V2 · V2 only
    writeTree(data, [sample('ses_tree', 'tree'), sample('ses_both', 'tree')]);
    writeV2(
      join(data, 'opencode.db'),
      [sample('ses_v2', 'v2'), sample('ses_new', 'v2')],
      [sample('ses_both', 'v1'), sample('ses_v2', 'v1')],
    );
    // An export of a session the database holds: a copy, never preferred.
    mkdirSync(join(data, 'exports'));
    writeFileSync(
      join(data, 'exports', 'ses_both.json'),
      JSON.stringify(sample('ses_both', 'export'), null, 2),
    );
    // opencode's snapshot repos and logs are not sessions and are not walked.
    mkdirSync(join(data, 'snapshot', 'global'), { recursive: true });
    writeFileSync(join(data, 'snapshot', 'global', 'HEAD'), 'ref: refs/heads/main\n');

    const [summary] = ingest(store.db, [data]);
    expect(summary?.warnings).toEqual([]);
    // export + database + two tree session files; no message, part or snapshot file was looked at.
    expect(summary?.files).toEqual({ read: 4, continued: 0, unchanged: 0, ignored: 0, failed: 0 });

    const sessions = new SessionStore(store.db);
    const rows = [...sessions.list({ agent: 'opencode' })];
    expect(rows.map((row) => row.source_id).sort()).toEqual(['ses_both', 'ses_new', 'ses_tree', 'ses_v2']);
    const prompt = (id: string) => texts(sessions.messages(sessionId('opencode', id))[0]?.parts ?? []);
    expect(prompt('ses_tree')).toEqual(['prompt tree']);
    expect(prompt('ses_both')).toEqual(['prompt v1']);
    expect(prompt('ses_v2')).toEqual(['prompt v2']);
    expect(prompt('ses_new')).toEqual(['prompt v2']);
    expect(sessions.row(sessionId('opencode', 'ses_both'))?.source_file).toBe(join(data, 'opencode.db'));
    expect(sessions.row(sessionId('opencode', 'ses_v2'))?.source_file).toBe(join(data, 'opencode.db'));
  });

  it('stores an export alone when nothing newer has the session, and lets the store replace it later', () => {
    const exports = join(home.path, 'exports');
    mkdirSync(exports);
    writeFileSync(join(exports, 'ses_x.json'), JSON.stringify(sample('ses_x', 'export')));
    ingest(store.db, [exports]);
    const sessions = new SessionStore(store.db);
    const id = sessionId('opencode', 'ses_x');
    expect(sessions.row(id)?.origin).toBe('mirror');
    writeV1(join(home.path, 'data', 'opencode.db'), [sample('ses_x', 'db')]);
    const [again] = ingest(store.db, [join(home.path, 'data'), exports]);
    expect(again?.sessions).toEqual({ new: 0, updated: 1, unchanged: 0 });
    expect(sessions.row(id)?.origin).toBe('file');
    expect(texts(sessions.messages(id)[0]?.parts ?? [])).toEqual(['prompt db']);
  });

  it('reads V2 rows: typed messages, tool states folded into content, pruned outputs cleared, compaction rows', () => {
    const session = sample('ses_v2only', 'v2');
    const step = session.messages[1];
    const tool = step?.parts[1] as unknown as { state: Record<string, unknown> };
    tool.state = { ...tool.state, time: { start: t0, end: t0, compacted: t0 + 5 } };
    step?.parts.push({
      id: 'prt_pending',
      type: 'tool',
      callID: 'call_pending',
      tool: 'read',
      state: { status: 'pending', input: { filePath: '/x' }, raw: '' },
    });
    session.messages.push(
      {
        info: { id: 'msg_c1', role: 'user', time: { created: t0 + 4 } },
        parts: [{ id: 'p1', type: 'text', text: 'compact me', synthetic: true }],
      },
      {
        info: { id: 'msg_c2', role: 'assistant', summary: true, finish: 'stop', time: { created: t0 + 5 } },
        parts: [{ id: 'p2', type: 'text', text: 'the summary' }],
      },
      {
        info: { id: 'msg_c3', role: 'user', time: { created: t0 + 6 } },
        parts: [{ id: 'p3', type: 'text', text: 'next' }],
      },
      {
        info: { id: 'msg_c4', role: 'assistant', finish: 'stop', modelID: 'm2', time: { created: t0 + 7 } },
        parts: [{ id: 'p4', type: 'text', text: 'done' }],
      },
    );
    const file = join(home.path, 'opencode.db');
    writeV2(file, [session]);
    const result = opencode.parseFile(file);
    const [parsed] = [...result.sessions];
    const messages = parsed?.messages ?? [];
    expect(messages.map((m) => [m.role, m.nativeId, m.injected ?? false, m.compaction ?? false])).toEqual([
      ['user', 'msg_ses_v2only_1', false, false],
      ['assistant', 'msg_ses_v2only_2', false, false],
      ['tool', 'msg_ses_v2only_2:results', false, false],
      ['assistant', 'msg_ses_v2only_3', false, false],
      ['user', 'msg_c1', true, false],
      ['assistant', 'msg_c2', false, true],
      ['user', 'msg_c3', false, false],
      ['assistant', 'msg_c4', false, false],
    ]);
    expect(toolResults(messages[2] as never)).toEqual([
      {
        type: 'tool_result',
        callId: 'call_ses_v2only',
        name: 'bash',
        output: '[Old tool result content cleared]',
        isError: false,
      },
    ]);
    expect(messages[1]?.parts[1]).toEqual({
      type: 'tool_call',
      id: 'call_pending',
      name: 'read',
      input: { filePath: '/x' },
      unanswered: true,
    });
    expect(messages[7]?.model).toBe('m2');
    const last = splitTurns(messages).at(-1);
    expect(last?.context.map((m) => m.nativeId)).toEqual(['msg_c2', 'msg_c3']);
    expect(parsed?.version).toBe('2.0.12');
  });

  it('notes V2 rows of unknown types and is quiet about the known event rows', () => {
    const file = join(home.path, 'opencode.db');
    writeV2(file, [sample('ses_rows', 'v2')]);
    const db = new Database(file);
    const insert = db.prepare(
      'INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, 0, 0, ?)',
    );
    insert.run('r1', 'ses_rows', 'agent-switched', 10, '{"agent":"plan"}');
    insert.run('r2', 'ses_rows', 'hologram', 11, '{}');
    db.close();
    const result = opencode.parseFile(file);
    const sessions = [...result.sessions];
    expect(sessions[0]?.messages).toHaveLength(4);
    expect(result.notes).toEqual([
      "1 part(s) of unknown type 'session_message/hologram' left out of the conversation",
    ]);
  });

  it('reads a copied data dir the same (nothing depends on absolute paths)', () => {
    const data = join(home.path, 'a');
    writeTree(data, [sample('ses_tree', 'tree')]);
    cpSync(data, join(home.path, 'b'), { recursive: true });
    const [summary] = ingest(store.db, [join(home.path, 'b')]);
    expect(summary?.sessions.new).toBe(1);
  });
});
