// `stats --fidelity` on the real Qwen Code 0.24.4 session: every turn is rebuilt from the conversation only, and
// the report says per turn what of the request the log does not hold (the system prompt, the tools, the
// reminders) — the same for every turn, the ones after a compaction included.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

const projects = join(root, 'test/fixtures/real/qwen-code-0.24.4/home/.qwen/projects');
let dir: ReturnType<typeof tempDir>;
let db: string;

beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', projects, '--db', db]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

interface Report {
  sessions: {
    agent: string;
    counts: Record<string, number>;
    turns: { turn: number; rebuilt: string; notRebuilt: string[] }[];
  }[];
}

describe('stats --fidelity for Qwen Code', () => {
  it('says per turn that the system prompt, the tools and the reminders are not in the log', async () => {
    const result = await run(['stats', '--fidelity', '--db', db, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const [session] = (JSON.parse(result.stdout) as Report).sessions;
    expect(session?.agent).toBe('qwen');
    expect(session?.counts).toEqual({ exact: 0, partial: 0, attachments: 0, conversation: 9 });
    for (const turn of session?.turns ?? []) {
      expect(turn.notRebuilt[0]).toMatch(/^the system prompt \(Qwen Code’s/);
      expect(turn.notRebuilt).toContain('the tool definitions');
      expect(turn.notRebuilt.join('\n')).toMatch(/<system-reminder> blocks of the first user message/);
    }
    // Turns 8 and 9 follow the compaction: Qwen's answer to the summary is stored (harness text), so nothing
    // more is missing there.
    const compacted = (session?.turns ?? []).filter((turn) => turn.turn >= 8);
    expect(compacted.map((turn) => turn.notRebuilt)).toEqual([
      session?.turns[0]?.notRebuilt,
      session?.turns[0]?.notRebuilt,
    ]);
  });

  it('names what is missing under the table', async () => {
    const result = await run(['stats', '--fidelity', '--db', db]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /\(qwen\): not in the log: the system prompt \(Qwen Code’s, about 30 KB\); the tool definitions;/,
    );
    expect(result.stdout).toContain('1 session(s), 9 turn(s): 0 exact from request records');
  });
});
