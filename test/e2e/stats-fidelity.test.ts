import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// `stats --fidelity`: per session, how each turn's context was rebuilt. The real Claude Code 2.1.328 sessions
// (request records in every turn), a copy of one with its records taken out (attachments only), a copy with one
// api-request-blob taken out (so one turn is partial), and sample-sessions (the conversation only).

const fixture = join(root, 'test', 'fixtures', 'real', 'claude-code-2.1.328');
const slug = '-home-ada-projects-demo-app';
const session = '5d5d5d5d-0004-4000-8000-00000000000d';
const lines = readFileSync(join(fixture, 'projects', slug, `${session}.jsonl`), 'utf8')
  .split('\n')
  .filter(Boolean);

let dir: ReturnType<typeof tempDir>;
let db: string;

function variant(name: string, id: string, keep: (line: string) => boolean): string {
  const folder = join(dir.path, name, slug);
  mkdirSync(folder, { recursive: true });
  // Only the sessionId field, and the line uuids (else the store takes the copy for a resumed session sharing the
  // original's history): the same id inside a message's text would change that message's hash.
  const uuids = new Set(
    lines.flatMap((line) => [...line.matchAll(/"uuid":"([\w-]+)"/g)].map((m) => m[1] as string)),
  );
  const kept = lines.filter(keep).map((line) => {
    let out = line.replaceAll(`"sessionId":"${session}"`, `"sessionId":"${id}"`);
    for (const uuid of uuids) out = out.replaceAll(`"${uuid}"`, `"${id.slice(0, 4)}${uuid.slice(4)}"`);
    return out;
  });
  writeFileSync(join(folder, `${id}.jsonl`), `${kept.join('\n')}\n`);
  return join(dir.path, name);
}

// The blob holding the task-notification turn's message: only the last request names it.
const notification = lines.findIndex(
  (line) => line.includes('"api-request-blob"') && line.includes('task-notification'),
);

beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  cpSync(join(fixture, 'projects'), join(dir.path, 'projects'), { recursive: true });
  const paths = [
    join(dir.path, 'projects'),
    variant('older', '0ddc0ddc-0004-4000-8000-00000000000d', (line) => !line.includes('"type":"api-request')),
    variant('damaged', 'dada0000-0004-4000-8000-00000000000d', (line) => line !== lines[notification]),
    join(root, 'sample-sessions'),
  ];
  for (const path of paths) {
    const ingest = await run(['ingest', path, '--db', db]);
    expect(ingest.exitCode, ingest.stderr).toBe(0);
  }
});
afterAll(() => dir.remove());

interface Report {
  sessions: {
    session: string;
    agent: string;
    counts: Record<string, number>;
    tail: { messages: number; matching: number };
    turns: { turn: number; rebuilt: string; missing: string[] }[];
  }[];
  totals: Record<string, number>;
}

describe('stats --fidelity', () => {
  it('counts per session the turns rebuilt exactly, partly, from attachments and from the conversation', async () => {
    expect(notification).toBeGreaterThan(0);
    const result = await run(['stats', '--fidelity', '--db', db, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    // 29 model turns in the real sessions, 3 + 3 in the two copies of 5d5d…, 30 in sample-sessions.
    expect(report.totals).toEqual({ exact: 29 + 2, partial: 1, attachments: 3, conversation: 30 });
    const damaged = report.sessions.find((s) => s.counts.partial === 1);
    expect(damaged?.turns.map((t) => t.rebuilt)).toEqual(['exact', 'exact', 'partial']);
    expect(damaged?.turns[2]?.missing).toHaveLength(1);
    // Every message rebuilt from a record hashes to its tail hash.
    for (const s of report.sessions) expect(s.tail.matching).toBe(s.tail.messages);
    expect(
      report.sessions.filter((s) => (s.counts.exact ?? 0) > 0).map((s) => s.tail.messages),
    ).not.toContain(0);
  });

  it('prints a table, names the partial turn, and takes sessions by prefix', async () => {
    const result = await run(['stats', '--fidelity', 'dada0000', '--db', db]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^SESSION\s+AGENT\s+TURNS\s+EXACT\s+PARTIAL\s+ATTACHMENTS\s+CONVERSATION/);
    expect(result.stdout).toMatch(/turn 3: partial, 1 message\(s\) whose hash names nothing/);
    expect(result.stdout).toContain('1 session(s), 3 turn(s): 2 exact from request records, 1 partly');
  });

  it('is one report: --elision with it is refused', async () => {
    const result = await run(['stats', '--fidelity', '--elision', '--db', db]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--elision and --fidelity are two reports');
  });
});
