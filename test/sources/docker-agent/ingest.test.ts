import { closeSync, openSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { splitTurns } from '../../../src/model/turns.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { tempDir } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';
import { call, createStore, type Store } from './store.js';

let dir: ReturnType<typeof tempDir>;
let store: ReturnType<typeof tempStore>;
let agentStore: Store | undefined;
beforeEach(() => {
  dir = tempDir('docker-agent-');
  store = tempStore();
});
afterEach(() => {
  agentStore?.close();
  agentStore = undefined;
  store.close();
  dir.remove();
});

const parent = 'a1b2c3d4-0000-4000-8000-000000000001';
const child = 'c0ffee00-0000-4000-8000-000000000002';
const task = 'Find the config loader';

/** A running docker-agent: a WAL store with a parent session that transferred a task to a sub-agent. */
function running(): { file: string; agent: Store } {
  const file = join(dir.path, 'session.db');
  const agent = createStore(file);
  agent.db.pragma('wal_autocheckpoint = 0');
  agent.session({ id: parent, title: 'Config bug', workingDir: '/home/ada/api' });
  agent.message(parent, { role: 'user', content: 'Why is the config ignored?' });
  agent.message(
    parent,
    { role: 'assistant', tool_calls: [call('toolu_t', 'transfer_task', { agent: 'librarian', task })] },
    { agent: 'root' },
  );
  agent.subsession(parent, { id: child }, (s) => {
    s.message(child, {
      role: 'system',
      content: `Your goal is to complete the following task:\n\n<task>\n${task}\n</task>`,
    });
    s.message(child, { role: 'user', content: 'Please proceed.' }, { implicit: true });
    s.message(child, { role: 'assistant', content: 'config/load.go' }, { agent: 'librarian' });
  });
  agent.message(
    parent,
    { role: 'tool', content: 'config/load.go', tool_call_id: 'toolu_t' },
    { agent: 'root' },
  );
  agent.message(parent, { role: 'assistant', content: 'See config/load.go.' }, { agent: 'root' });
  agentStore = agent;
  return { file, agent };
}

const messageRows = () =>
  store.db.prepare('SELECT session_id, seq, rowid, hash FROM messages ORDER BY session_id, seq').all() as {
    session_id: string;
    seq: number;
    rowid: number;
    hash: string;
  }[];

describe('ingesting a docker-agent store', () => {
  it('stores both sessions in one go, the sub-session linked to its parent and to the call that spawned it', () => {
    const { file } = running();
    const [summary] = ingest(store.db, [file]);
    expect(summary).toMatchObject({
      files: { read: 1, continued: 0, unchanged: 0, ignored: 0, failed: 0 },
      sessions: { new: 2, updated: 0, unchanged: 0 },
      messages: 7,
      toolCalls: 1,
      warnings: [],
    });
    const sessions = new SessionStore(store.db);
    const rows = [...sessions.list({ agent: 'docker-agent' })];
    const sub = rows.find((row) => row.source_id === child);
    expect(sub).toMatchObject({
      kind: 'subagent',
      parent_id: sessionId('docker-agent', parent),
      spawned_by: 'toolu_t',
      title: `librarian: ${task}`,
      source_file: file,
    });
    const main = sessions.messages(sessionId('docker-agent', parent));
    expect(splitTurns(main)).toHaveLength(2);
  });

  it('reads nothing again when the store is unchanged, and only the new messages after a new row', () => {
    const { file, agent } = running();
    ingest(store.db, [file]);
    const before = messageRows();

    const [again] = ingest(store.db, [file]);
    expect(again).toMatchObject({ files: { read: 0, continued: 0, unchanged: 1 }, lines: 0, messages: 0 });

    // docker-agent goes on in the WAL only; the main file does not change.
    agent.message(parent, { role: 'user', content: 'And the env vars?' });
    agent.message(parent, { role: 'assistant', content: 'They override the file.' }, { agent: 'root' });
    const [grown] = ingest(store.db, [file]);
    expect(grown).toMatchObject({
      files: { read: 1, continued: 0, unchanged: 0 },
      sessions: { new: 0, updated: 1, unchanged: 1 },
    });
    const after = messageRows();
    // The rows already stored are kept as they were (same rowid, same hash); two new ones follow.
    expect(after).toEqual(expect.arrayContaining(before));
    const added = after.filter((row) => !before.some((old) => old.rowid === row.rowid));
    expect(added.map((row) => [row.session_id, row.seq])).toEqual([
      [sessionId('docker-agent', parent), 4],
      [sessionId('docker-agent', parent), 5],
    ]);
  });

  it('reports a session.db that is not SQLite, naming the file, and stores nothing from it', () => {
    const file = join(dir.path, 'session.db');
    writeFileSync(file, 'not sqlite at all\n');
    const [summary] = ingest(store.db, [file]);
    expect(summary?.files.failed).toBe(1);
    expect(summary?.warnings).toEqual([
      {
        file,
        message: 'not a SQLite database, yet named like docker-agent’s session store',
        unreadable: true,
      },
    ]);
    expect(store.db.prepare('SELECT COUNT(*) FROM sessions').pluck().get()).toBe(0);
  });

  it('reports bad rows with the file and the row, and stores the rest of the session', () => {
    const { file, agent } = running();
    const bad = agent.item(parent, { item_type: 'message', agent_name: 'root', message_json: '{oops' });
    const [summary] = ingest(store.db, [file]);
    expect(summary?.skippedLines).toBe(1);
    expect(summary?.warnings).toEqual([
      {
        file,
        message: expect.stringMatching(
          new RegExp(`^session_items row ${bad}: not valid JSON \\(.*\\); skipped$`),
        ),
      },
    ]);
    expect(summary?.sessions.new).toBe(2);
  });

  it('fails a store found corrupt while its rows are read, naming it, and stores nothing from it', () => {
    const file = join(dir.path, 'session.db');
    const agent = createStore(file, { wal: false });
    for (let n = 0; n < 40; n++) {
      const id = `session-${n}`;
      agent.session({ id, title: `Session ${n}` });
      agent.message(id, { role: 'user', content: 'x'.repeat(3000) });
      agent.message(id, { role: 'assistant', content: 'y'.repeat(3000) }, { agent: 'root' });
    }
    agent.close();
    // The schema pages at the front survive; pages of rows further on are overwritten with garbage.
    const size = statSync(file).size;
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(16 * 4096, 0xa5), 0, 16 * 4096, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const [summary] = ingest(store.db, [file]);
    expect(summary?.files.failed).toBe(1);
    expect(summary?.warnings.at(-1)).toEqual({
      file,
      message: expect.stringMatching(
        /^the database is corrupt or truncated \(.*\); nothing from it was stored$/,
      ),
      unreadable: true,
    });
    expect(store.db.prepare('SELECT COUNT(*) FROM sessions').pluck().get()).toBe(0);
  });
});
