// A store follows its readers: a file read by another version of its agent's reader is read again on the next
// ingest (what the reader makes of the same bytes may have changed), and then not again.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCode } from '../../src/sources/claude-code/index.js';
import { ingest, type PathSummary } from '../../src/sources/ingest.js';
import { root } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';

const samples = join(root, 'sample-sessions', 'claude-code');

let store: ReturnType<typeof tempStore>;
beforeEach(() => {
  store = tempStore();
});
afterEach(() => store.close());

const run = (): PathSummary => (ingest(store.db, [samples]) as [PathSummary])[0];

describe('the reader version of each file', () => {
  it('is stored, and a file read by another version is read again and corrected', () => {
    const first = run();
    expect(first.files.read).toBeGreaterThan(0);
    const versions = store.db.prepare('SELECT DISTINCT parser FROM source_files').pluck().all();
    expect(versions).toEqual([claudeCode.version]);
    expect(run().files).toMatchObject({ read: 0, unchanged: first.files.read });

    // What an older reader left: its version, and a message it read differently (here: flagged as harness text).
    store.db.prepare("UPDATE source_files SET parser = '1'").run();
    const row = store.db
      .prepare("SELECT session_id, seq FROM messages WHERE role = 'user' AND injected = 0 LIMIT 1")
      .get() as { session_id: string; seq: number };
    store.db
      .prepare("UPDATE messages SET injected = 1, hash = 'stale' WHERE session_id = ? AND seq = ?")
      .run(row.session_id, row.seq);
    store.db.prepare('UPDATE sessions SET meta_hash = ? WHERE id = ?').run('stale', row.session_id);

    const again = run();
    expect(again.files).toMatchObject({ read: first.files.read, unchanged: 0 });
    expect(again.sessions.updated).toBeGreaterThanOrEqual(1);
    const injected = store.db
      .prepare('SELECT injected FROM messages WHERE session_id = ? AND seq = ?')
      .pluck()
      .get(row.session_id, row.seq);
    expect(injected).toBe(0);
    expect(store.db.prepare('SELECT DISTINCT parser FROM source_files').pluck().all()).toEqual([
      claudeCode.version,
    ]);
    expect(run().files).toMatchObject({ read: 0, unchanged: first.files.read });
  });
});
