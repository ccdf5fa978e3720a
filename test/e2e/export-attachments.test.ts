import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';
import { loggedRequests } from '../helpers/requests-log.js';

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

type Row = {
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string; description: string } }[];
};
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

describe('export and the tools the model was offered', () => {
  it('gives each turn the tool list its recorded request offered, not our catalogue', async () => {
    const rows = await exported([]);
    // What the model server received, by the list of tool names (main thread: 10 tools; an Explore sub-agent: 7).
    const offered = new Map<string, string[]>();
    for (const request of loggedRequests<{ tools: { name: string; description: string }[] }>()) {
      if (request.kind !== 'scripted') continue;
      offered.set(
        request.body.tools.map((tool) => tool.name).join(','),
        request.body.tools.map((t) => t.description),
      );
    }
    expect(rows).toHaveLength(29);
    for (const row of rows) {
      const names = (row.tools ?? []).map((tool) => tool.function.name).join(',');
      expect([...offered.keys()]).toContain(names);
      expect((row.tools ?? []).map((tool) => tool.function.description)).toEqual(offered.get(names));
    }
    expect(new Set(rows.map((row) => row.tools?.length))).toEqual(new Set([10, 7]));
  });
});
