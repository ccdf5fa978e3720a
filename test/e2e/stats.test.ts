import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, tempDir } from '../helpers/cli.js';

// --elision is the only report `stats` has: naming none runs it instead of an error that can only say "add
// --elision".

let dir: ReturnType<typeof tempDir>;
let db: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', 'sample-sessions', '--db', db]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

describe('stats with no report named', () => {
  it('runs --elision, the only report: the same figures, text and --json', async () => {
    const [plain, elision, json, elisionJson] = await Promise.all([
      run(['stats', '--db', db]),
      run(['stats', '--elision', '--db', db]),
      run(['stats', '--db', db, '--json']),
      run(['stats', '--elision', '--db', db, '--json']),
    ]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^TOOL\s+RESULTS\s+ELIDED/);
    expect(plain.stdout).toContain('6 session(s); across the');
    expect(plain.stdout).toBe(elision.stdout);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(elisionJson.stdout));
    expect(JSON.parse(json.stdout).sessions).toBe(6);
  });

  it('runs it over the sessions named, and still refuses a bad option value', async () => {
    const one = await run(['stats', '6f1c2a34', '--db', db, '--json']);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).sessions).toBe(1);
    const bad = await run(['stats', '--max-result-bytes', '10', '--db', db]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--max-result-bytes takes a whole number from 256');
  });

  it('says so in --help, with the bare command as an example', async () => {
    const help = await run(['stats', '--help']);
    expect(help.stdout).toContain('With no report named, stats runs --elision');
    expect(help.stdout).toMatch(/Examples:\n {2}\$ replay-history stats\n/);
  });
});
