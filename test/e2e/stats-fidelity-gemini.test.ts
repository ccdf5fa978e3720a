// `stats --fidelity` on the real Gemini CLI 0.61.0 sessions: every turn is rebuilt from the conversation (with the
// session context the CLI logs as its own message), and the report says per turn what of the request is in no
// log: the system instruction, the tool declarations, the generation config, the thought signatures; after a
// resume, the results the CLI sends twice.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

const tree = join(root, 'test/fixtures/real/gemini-cli-0.61.0/home/.gemini/tmp');
let dir: ReturnType<typeof tempDir>;
let db: string;

beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', tree, '--db', db]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

interface Report {
  sessions: {
    agent: string;
    counts: Record<string, number>;
    turns: { turn: number; notRebuilt: string[] }[];
  }[];
  totals: Record<string, number>;
}

describe('stats --fidelity on Gemini CLI sessions', () => {
  it('says per turn what the log could not rebuild', async () => {
    const result = await run(['stats', '--fidelity', '--db', db, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    // 13 agent turns: 2 + 9 with the session context logged, the sub-agent's 2 without one.
    expect(report.totals).toEqual({ exact: 0, partial: 0, attachments: 11, conversation: 2 });
    const turns = report.sessions.flatMap((s) => s.turns);
    expect(turns).toHaveLength(13);
    for (const turn of turns)
      expect(turn.notRebuilt.slice(0, 4)).toEqual([
        'the system instruction (Gemini CLI’s, about 32 KB: approval mode, skills, sub-agents)',
        'the tool declarations (functionDeclarations)',
        'the generation config (temperature, topP, topK, thinkingConfig)',
        'the thought signatures of the function calls',
      ]);
    const main = report.sessions.find((s) => s.turns.length === 9);
    expect(main?.turns.map((t) => t.notRebuilt.length)).toEqual([4, 4, 4, 4, 4, 4, 5, 4, 4]);
    expect(main?.turns[6]?.notRebuilt[4]).toMatch(/sent a second time/);
  });

  it('names them in the table output too', async () => {
    const result = await run(['stats', '--fidelity', '--db', db]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.match(/\(gemini\): not in the log: the system instruction/g)).toHaveLength(3);
  });
});
