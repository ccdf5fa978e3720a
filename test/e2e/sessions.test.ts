import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// `sessions --help` says each sub-agent is listed under its parent, indented: the table must do so.

let dir: ReturnType<typeof tempDir>;
let db: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', 'sample-sessions', '--db', db]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

interface Listed {
  id: string;
  kind: string;
  parentId: string | null;
  startedAt: string | null;
}
const listed = async (store: string): Promise<Listed[]> =>
  JSON.parse((await run(['sessions', '--db', store, '--json'])).stdout) as Listed[];
/** The table's data lines, without the header. */
const lines = async (store: string): Promise<string[]> => {
  const result = await run(['sessions', '--db', store]);
  expect(result.exitCode, result.stderr).toBe(0);
  return result.stdout.trimEnd().split('\n').slice(1);
};

describe('sessions', () => {
  it('lists each sub-agent right after its parent, its id indented', async () => {
    const sessions = await listed(db);
    const children = sessions.filter((s) => s.parentId !== null);
    // Claude Code's Task sub-agent and opencode's @general one.
    expect(children).toHaveLength(2);
    const table = await lines(db);
    expect(table).toHaveLength(sessions.length);
    for (const child of children) {
      const at = table.findIndex((line) => line.startsWith(`  ${child.id.slice(0, 12)} `));
      expect(at, child.id).toBeGreaterThan(0);
      expect(table[at - 1]?.startsWith(String(child.parentId).slice(0, 12))).toBe(true);
      expect(table[at]).toMatch(/^ {2}\w{12}\s+\S+\s+subagent\s/);
    }
    // Main sessions are not indented, and stay oldest first.
    const mains = sessions.filter((s) => s.parentId === null);
    expect(table.filter((line) => !line.startsWith(' ')).map((line) => line.slice(0, 12))).toEqual(
      mains.map((s) => s.id.slice(0, 12)),
    );
  });

  it('lists a sub-agent whose parent is not stored on its own, naming the parent', async () => {
    const store = join(dir.path, 'orphan.db');
    const child = join(
      root,
      'sample-sessions',
      'claude-code',
      '-home-ada-todo-api',
      '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      'subagents',
      'agent-b51e7a2.jsonl',
    );
    expect((await run(['ingest', child, '--db', store])).exitCode).toBe(0);
    const [session] = await listed(store);
    expect(session?.parentId).toBeTruthy();
    expect(await lines(store)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${session?.id.slice(0, 12)}\\s+claude-code\\s+subagent of ${session?.parentId?.slice(0, 8)}\\s`,
        ),
      ),
    ]);
  });

  it('says in --help what the table shows, with an example of each option', async () => {
    const help = await run(['sessions', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('listed right after its parent, its id indented');
    expect(help.stdout).toContain('--agent codex');
    expect(help.stdout).toContain('$ replay-history sessions --agent claude-code --json');
  });
});
