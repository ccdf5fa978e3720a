import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PathSummary } from '../../src/sources/ingest.js';
import { run, tempDir } from '../helpers/cli.js';
import { call, createStore, type Store } from '../sources/docker-agent/store.js';

const parent = 'a1b2c3d4-0000-4000-8000-000000000001';
const child = 'c0ffee00-0000-4000-8000-000000000002';

let dir: ReturnType<typeof tempDir>;
let file: string;
let db: string;
let agent: Store;
beforeAll(() => {
  dir = tempDir();
  file = join(dir.path, 'session.db');
  db = join(dir.path, 'replay.db');
  // docker-agent is still running: everything below is only in the WAL.
  agent = createStore(file);
  agent.db.pragma('wal_autocheckpoint = 0');
  agent.session({ id: parent, title: 'Config bug', workingDir: '/home/ada/api' });
  agent.message(parent, { role: 'user', content: 'Why is the config ignored?' });
  agent.message(
    parent,
    {
      role: 'assistant',
      tool_calls: [call('toolu_t', 'transfer_task', { agent: 'librarian', task: 'Find the loader' })],
    },
    { agent: 'root' },
  );
  agent.subsession(parent, { id: child }, (s) => {
    s.message(child, { role: 'system', content: '<task>\nFind the loader\n</task>' });
    s.message(child, { role: 'user', content: 'Please proceed.' }, { implicit: true });
    s.message(child, { role: 'assistant', content: 'config/load.go' }, { agent: 'librarian' });
  });
  agent.message(
    parent,
    { role: 'tool', content: 'config/load.go', tool_call_id: 'toolu_t' },
    { agent: 'root' },
  );
  agent.message(parent, { role: 'assistant', content: 'See config/load.go.' }, { agent: 'root' });
});
afterAll(() => {
  agent.close();
  dir.remove();
});

describe('replay-history on a docker-agent store', () => {
  it('ingests the live database as JSON, leaves it as it was, and lists its sessions by agent', async () => {
    const before = ['', '-wal', '-shm'].map((suffix) => readFileSync(file + suffix).toString('base64'));
    const ingest = await run(['ingest', file, '--db', db, '--json']);
    expect(ingest.exitCode).toBe(0);
    const report = JSON.parse(ingest.stdout) as { paths: PathSummary[] };
    expect(report.paths[0]).toMatchObject({
      path: file,
      files: { read: 1, failed: 0 },
      sessions: { new: 2 },
      toolCalls: 1,
      warnings: [],
    });
    expect(['', '-wal', '-shm'].map((suffix) => readFileSync(file + suffix).toString('base64'))).toEqual(
      before,
    );

    const listed = await run(['sessions', '--agent', 'docker-agent', '--db', db, '--json']);
    expect(listed.exitCode).toBe(0);
    const sessions = JSON.parse(listed.stdout) as Record<string, unknown>[];
    const main = sessions.find((s) => s.sourceId === parent);
    expect(main).toMatchObject({
      agent: 'docker-agent',
      kind: 'main',
      title: 'Config bug',
      cwd: '/home/ada/api',
      sourceFile: file,
      turns: 2,
      toolCalls: 1,
      unansweredToolCalls: 0,
    });
    expect(sessions.find((s) => s.sourceId === child)).toMatchObject({
      kind: 'subagent',
      parentId: main?.id,
      spawnedBy: 'toolu_t',
      title: 'librarian: Find the loader',
      turns: 1,
    });

    const again = await run(['ingest', file, '--db', db, '--json']);
    expect((JSON.parse(again.stdout) as { paths: PathSummary[] }).paths[0]?.files).toMatchObject({
      unchanged: 1,
    });
  });

  it('exits 2 with the file named when a session.db is not a database', async () => {
    const bad = join(dir.path, 'broken', 'session.db');
    mkdirSync(join(dir.path, 'broken'));
    writeFileSync(bad, 'not a database\n');
    const result = await run(['ingest', bad, '--db', db]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${bad}: not a SQLite database`);
  });
});
