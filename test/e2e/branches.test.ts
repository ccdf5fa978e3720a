import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// Abandoned rewind branches as sessions (test/fixtures/claude-code/rewind-branches.jsonl: a session of 4 turns and
// two answered abandoned branches of 2 and 1 turns of their own): listed by `sessions` under their session, and
// taken by replay and export only with --branches.

const fixture = join(root, 'test', 'fixtures', 'claude-code', 'rewind-branches.jsonl');
let dir: ReturnType<typeof tempDir>;
let db: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', fixture, '--db', db]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('abandoned rewind branches', () => {
  it('sessions lists each branch under its session, with its own turns', async () => {
    const listed = await run(['sessions', '--db', db]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const rows = listed.stdout.split('\n').slice(1).filter(Boolean);
    expect(
      rows.map((row) =>
        row
          .trim()
          .split(/\s{2,}/)
          .slice(1, 5),
      ),
    ).toEqual([
      ['claude-code', 'main', '2026-05-10 10:00', '4'],
      ['claude-code', 'branch', '2026-05-10 10:00', '2'],
      ['claude-code', 'branch', '2026-05-10 10:00', '1'],
    ]);
    expect(rows[1]).toMatch(/^ {2}\w{12}\s/);
    expect(rows[1]).toContain('branch: Rename it to helpers.py');
    const json = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
      id: string;
      kind: string;
      parentId: string | null;
    }[];
    const main = json.find((s) => s.kind === 'main');
    expect(json.filter((s) => s.kind === 'branch').map((s) => s.parentId)).toEqual([main?.id, main?.id]);
  });

  it('export leaves branches out unless --branches', async () => {
    const plain = join(dir.path, 'plain.jsonl');
    const all = join(dir.path, 'all.jsonl');
    for (const [out, extra] of [
      [plain, []],
      [all, ['--branches']],
    ] as const) {
      const result = await run(['export', '--unit', 'model-turn', '--out', out, '--db', db, ...extra]);
      expect(result.exitCode, result.stderr).toBe(0);
    }
    // One row per model turn: the session's 4, then also the branches' own 2 + 1.
    expect(lines(plain)).toHaveLength(4);
    expect(lines(all)).toHaveLength(4 + 3);
  });

  it('replay --all leaves branches out unless --branches; their pairs are their own turns', async () => {
    const plain = join(dir.path, 'pairs.jsonl');
    const all = join(dir.path, 'pairs-all.jsonl');
    const a = await run(['replay', '--all', '--out', plain, '--force', '--db', db, '--quiet'], {
      cwd: dir.path,
    });
    expect(a.exitCode, a.stderr).toBe(0);
    const b = await run(['replay', '--all', '--branches', '--out', all, '--force', '--db', db, '--quiet'], {
      cwd: dir.path,
    });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(lines(plain)).toHaveLength(4);
    const pairs = lines(all).map((line) => JSON.parse(line) as { turn: number });
    // A branch numbers its turns on from the prefix it shares (2 turns before the fork): the session's 1–4,
    // one branch's 3 and 4, the other's 3.
    expect(pairs.map((pair) => pair.turn).sort()).toEqual([1, 2, 3, 3, 3, 4, 4]);
  });
});
