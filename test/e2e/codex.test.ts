import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PathSummary } from '../../src/sources/ingest.js';
import { root, run, tempDir } from '../helpers/cli.js';

const fixtures = join(root, 'test', 'fixtures', 'codex');

let dir: ReturnType<typeof tempDir>;
let db: string;
let sessionsDir: string;
beforeAll(() => {
  dir = tempDir();
  db = join(dir.path, 'store', 'replay.db');
  // Laid out as Codex does: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl
  sessionsDir = join(dir.path, 'codex-home', 'sessions');
  const day = join(sessionsDir, '2026', '03', '02');
  mkdirSync(day, { recursive: true });
  cpSync(join(fixtures, 'subagents'), day, { recursive: true });
  cpSync(
    join(fixtures, 'basic.jsonl'),
    join(day, 'rollout-2026-03-01T10-00-00-0196a000-0000-7000-8000-000000000001.jsonl'),
  );
});
afterAll(() => dir.remove());

describe('replay-history binary on Codex rollouts', () => {
  it('ingests a sessions folder as JSON, then lists the Codex sessions with the sub-agent link', async () => {
    const ingest = await run(['ingest', sessionsDir, '--db', db, '--json']);
    expect(ingest.stderr).toBe('');
    expect(ingest.exitCode).toBe(0);
    const report = JSON.parse(ingest.stdout) as { paths: PathSummary[] };
    expect(report.paths[0]).toMatchObject({
      files: { read: 3, failed: 0 },
      sessions: { new: 3, updated: 0 },
      // What the store holds: the child's copy of its parent's call is stored once, in the parent.
      toolCalls: 1 + 3 + 2 - 1,
      warnings: [],
    });

    const listed = await run(['sessions', '--agent', 'codex', '--db', db, '--json']);
    expect(listed.exitCode).toBe(0);
    const sessions = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(sessions.map((s) => s.sourceId)).toEqual([
      '0196a000-0000-7000-8000-000000000001',
      '0196b000-0000-7000-8000-00000000000a',
      '0196b000-0000-7000-8000-00000000000c',
    ]);
    expect(sessions[0]).toMatchObject({
      agent: 'codex',
      kind: 'main',
      title: 'Why does the cart test fail?',
      turns: 2,
      toolCalls: 1,
      cwd: '/home/ada/shop',
    });
    const parent = sessions[1] as Record<string, unknown>;
    expect(sessions[2]).toMatchObject({
      kind: 'subagent',
      parentId: parent.id,
      spawnedBy: 'call_spawn',
      title: 'Sartre (explorer)',
      continues: { sessionId: parent.id },
    });
    const other = await run(['sessions', '--agent', 'claude-code', '--db', db, '--json']);
    expect(JSON.parse(other.stdout)).toEqual([]);
  });

  it('re-ingesting unchanged rollouts reads nothing', async () => {
    const again = await run(['ingest', sessionsDir, '--db', db, '--json']);
    expect(again.exitCode).toBe(0);
    const report = JSON.parse(again.stdout) as { paths: PathSummary[] };
    expect(report.paths[0]).toMatchObject({ files: { read: 0, unchanged: 3 }, messages: 0 });
  });

  it('with no path, reads $CODEX_HOME/sessions', async () => {
    const fresh = join(dir.path, 'default.db');
    const result = await run(['ingest', '--db', fresh, '--json'], {
      // Every other agent's default folders point into an empty home.
      env: {
        CODEX_HOME: join(dir.path, 'codex-home'),
        HOME: join(dir.path, 'nobody'),
        CLAUDE_CONFIG_DIR: '',
        XDG_DATA_HOME: join(dir.path, 'nobody', 'data'),
        XDG_CONFIG_HOME: join(dir.path, 'nobody', 'config'),
      },
    });
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { paths: PathSummary[] };
    expect(report.paths.map((p) => p.path)).toEqual([sessionsDir]);
    expect(report.paths[0]?.sessions.new).toBe(3);
  });

  it('a corrupt line mid-file and a torn last line: reported with file:line, the rest ingested, exit 0', async () => {
    const file = join(dir.path, 'damaged.jsonl');
    const lines = readFileSync(join(fixtures, 'interrupted.jsonl'), 'utf8').trimEnd().split('\n');
    const last = lines.pop() as string;
    lines.splice(4, 0, '{"timestamp":"2026-03-01T14:00:01.500Z","type":"event_msg","payload":');
    writeFileSync(file, `${lines.join('\n')}\n${last.slice(0, 50)}`);
    const damagedDb = join(dir.path, 'damaged.db');
    const result = await run(['ingest', file, '--db', damagedDb]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`${file}:5: not valid JSON`);
    expect(result.stderr).toContain(
      `${file}:14: last line is incomplete (still being written?); not read yet`,
    );
    const show = await run(['show', '0196a000-0000-7000-8000-000000000005', '--db', damagedDb]);
    expect(show.exitCode).toBe(0);
    expect(show.stdout).toContain('→ exec_command({"cmd":"make all"}) [no result recorded]');
    expect(show.stdout).toContain('api: built');
  });
});
