// Ingesting Qwen Code sessions: an unchanged file is not read again, a file that grew (the next --continue run
// appends to it) adds only its new messages, and the stored session is the one the adapter read.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { ingest } from '../../../src/sources/ingest.js';
import { SessionStore } from '../../../src/store/sessions.js';
import { root, tempDir } from '../../helpers/cli.js';
import { tempStore } from '../../helpers/store.js';

const name = 'a433a22d-6a3f-4757-a1ae-31e85c38a874.jsonl';
const source = join(
  root,
  'test/fixtures/real/qwen-code-0.24.4/home/.qwen/projects/-home-ada-projects-demo-app/chats',
  name,
);
const lines = readFileSync(source, 'utf8').trim().split('\n');
const id = sessionId('qwen', 'a433a22d-6a3f-4757-a1ae-31e85c38a874');

let store: ReturnType<typeof tempStore>;
let dir: ReturnType<typeof tempDir>;
let file: string;
beforeEach(() => {
  store = tempStore();
  dir = tempDir();
  const chats = join(dir.path, 'projects', '-home-ada-projects-demo-app', 'chats');
  mkdirSync(chats, { recursive: true });
  file = join(chats, name);
});
afterEach(() => {
  store.close();
  dir.remove();
});

describe('ingesting Qwen Code sessions', () => {
  it('stores the session, and reads nothing again when the file is unchanged', () => {
    copyFileSync(source, file);
    const [first] = ingest(store.db, [join(dir.path, 'projects')]);
    expect(first).toMatchObject({
      files: { read: 1, continued: 0, unchanged: 0, ignored: 0, failed: 0 },
      sessions: { new: 1, updated: 0, unchanged: 0 },
      // 27 records' messages and Qwen's acknowledgement of each of the two compaction summaries.
      messages: 29,
      toolCalls: 11,
      lines: 52,
      warnings: [],
    });
    expect(new SessionStore(store.db).row(id)).toMatchObject({ agent: 'qwen', message_count: 29 });
    const [again] = ingest(store.db, [join(dir.path, 'projects')]);
    expect(again).toMatchObject({
      files: { read: 0, continued: 0, unchanged: 1 },
      sessions: { new: 0, updated: 0, unchanged: 1 },
      messages: 0,
      lines: 0,
      warnings: [],
    });
  });

  it('adds only what a --continue run appended: the first run, then the rest', () => {
    // Lines 1–35 are run 01 (TASK-A); 36–52 the two --continue runs and the /compress.
    writeFileSync(file, `${lines.slice(0, 35).join('\n')}\n`);
    const [first] = ingest(store.db, [file]);
    expect(first).toMatchObject({ sessions: { new: 1 }, messages: 17, toolCalls: 10 });
    writeFileSync(file, `${lines.join('\n')}\n`);
    const [grown] = ingest(store.db, [file]);
    expect(grown).toMatchObject({
      sessions: { new: 0, updated: 1 },
      messages: 29 - 17,
      toolCalls: 1,
      rewritten: { messages: 0, toolCalls: 0 },
    });
    const sessions = new SessionStore(store.db);
    expect(sessions.row(id)).toMatchObject({ message_count: 29 });
    expect(sessions.messages(id).filter((m) => m.compaction)).toHaveLength(2);
  });
});
