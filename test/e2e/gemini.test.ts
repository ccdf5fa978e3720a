// The real Gemini CLI 0.61.0 sessions through the CLI: a resume's regenerated session context is shown as
// harness context replacing its earlier copy (not as a compaction summary), and it is harness text in
// exports — left out unless --include-injected — while the compression's summary stays.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

const chats = join(root, 'test/fixtures/real/gemini-cli-0.61.0/home/.gemini/tmp');
let dir: ReturnType<typeof tempDir>;
let db: string;
let resumed: string;

beforeAll(async () => {
  dir = tempDir('gemini-e2e-');
  db = join(dir.path, 'store.db');
  expect((await run(['ingest', chats, '--db', db])).exitCode).toBe(0);
  const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
    id: string;
    agent: string;
    sourceId: string;
  }[];
  resumed = listed.find((s) => s.agent === 'gemini' && s.sourceId.startsWith('9c1bacd1'))?.id ?? '';
  expect(resumed).not.toBe('');
});
afterAll(() => dir?.remove());

describe('a resumed Gemini CLI session', () => {
  it('shows the regenerated session context as harness context replacing its copy, the compression as a summary', async () => {
    const shown = await run(['show', resumed, '--db', db]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/session_context attachment, replaces the earlier context/);
    expect(shown.stdout).toContain('[harness context that replaces its earlier copy');
    expect(shown.stdout).toMatch(/injected, compaction summary/);
  });

  it('exports the session context only with --include-injected; the summary always', async () => {
    const plain = join(dir.path, 'plain.jsonl');
    const all = join(dir.path, 'all.jsonl');
    expect((await run(['export', '--format', 'openai', '--db', db, '--out', plain])).exitCode).toBe(0);
    expect(
      (await run(['export', '--format', 'openai', '--include-injected', '--db', db, '--out', all])).exitCode,
    ).toBe(0);
    expect(readFileSync(plain, 'utf8')).not.toContain('<session_context>');
    expect(readFileSync(all, 'utf8')).toContain('<session_context>');
    expect(readFileSync(plain, 'utf8')).toContain('<state_snapshot>');
  });
});
