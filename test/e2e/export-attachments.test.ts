import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// The harness text Claude Code 2.1.328 logs as rendered attachments (its environment/date system messages, the
// gitStatus and attribution reminders) is injected text: export leaves it out unless --include-injected, as it
// does the reminders written into user turns.

let dir: ReturnType<typeof tempDir>;
let db: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const projects = join(root, 'test', 'fixtures', 'real', 'claude-code-2.1.328', 'projects');
  const ingest = await run(['ingest', projects, '--db', db]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

type Row = { messages: { role: string; content: string | null }[] };
const exported = async (extra: string[]): Promise<Row[]> => {
  const out = join(dir.path, `${extra.length}.jsonl`);
  const result = await run([
    'export',
    '--unit',
    'model-turn',
    '--no-redact',
    '--out',
    out,
    '--db',
    db,
    ...extra,
  ]);
  expect(result.exitCode, result.stderr).toBe(0);
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);
};
const harness = (rows: Row[]) =>
  rows.flatMap((row) =>
    row.messages.filter(
      (m) =>
        typeof m.content === 'string' &&
        (m.content.includes('# Environment') || m.content.includes('# gitStatus')),
    ),
  );

describe('export and the harness text logged as attachments', () => {
  it('leaves it out by default and keeps it with --include-injected', async () => {
    const plain = await exported([]);
    const all = await exported(['--include-injected']);
    expect(plain).toHaveLength(29);
    expect(harness(plain)).toEqual([]);
    // Every turn's context holds the environment system message (sub-agents and after a compaction too), and
    // most the gitStatus reminder. A row has one system message, first: the environment is in it.
    for (const row of all) {
      const systems = row.messages.filter((m) => m.role === 'system');
      expect(systems).toHaveLength(1);
      expect(row.messages[0]).toBe(systems[0]);
      expect(systems[0]?.content).toContain('# Environment');
    }
    expect(harness(all).length).toBeGreaterThan(29);
  });
});
