import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// `show` numbers each model turn so that `show --turn N` can be found by eye: the number beside a turn is the
// N that --turn takes, and the `turn` a replay's pairs file gives it.

let dir: ReturnType<typeof tempDir>;
let db: string;
let resumed: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  resumed = join(dir.path, 'resumed');
  cpSync(join(root, 'test', 'fixtures', 'claude-code', 'resumed'), resumed, { recursive: true });
  for (const path of [join(root, 'sample-sessions'), resumed]) {
    const ingest = await run(['ingest', path, '--db', db]);
    expect(ingest.exitCode, ingest.stderr).toBe(0);
  }
});
afterAll(() => dir.remove());

/** The turns `show` printed: each number with the file:line of its message. */
const numbered = (transcript: string): { turn: number; where: string }[] =>
  [...transcript.matchAll(/^── assistant · turn (\d+) (?:\([^)]*\) )?(\S+)$/gm)].map((m) => ({
    turn: Number(m[1]),
    where: String(m[2]),
  }));

interface TurnJson {
  index: number;
  response: { source: { file: string; line: number }; parts: { type: string; text?: string }[] };
}
const turnJson = async (prefix: string, n: number): Promise<TurnJson> => {
  const result = await run(['show', prefix, '--turn', String(n), '--db', db, '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as TurnJson;
};

describe('show numbers the model turns', () => {
  it('prints beside each turn the N that show --turn N shows (across a compaction)', async () => {
    const shown = await run(['show', '9a8b7c6d', '--db', db]);
    expect(shown.exitCode).toBe(0);
    const turns = numbered(shown.stdout);
    // 9a8b7c6d has six model turns; the compaction summary is no turn.
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(shown.stdout).toContain('── user (injected, compaction summary)');
    const answers = await Promise.all(turns.map((t) => turnJson('9a8b7c6d', t.turn)));
    answers.forEach((answer, i) => {
      const { file, line } = answer.response.source;
      expect(`${file}:${line}`).toBe(turns[i]?.where);
      expect(answer.index + 1).toBe(turns[i]?.turn);
    });
  });

  it('marks the answer of show --turn N with the same number', async () => {
    const result = await run(['show', '9a8b7c6d', '--turn', '4', '--db', db]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('── turn 4: the model answered ──');
    // Its context starts at the compaction summary: no earlier turn is in it.
    expect(numbered(result.stdout).map((t) => t.turn)).toEqual([4]);
    // Turn 6 was given what followed the compaction: turns 4 and 5 (not 1 to 3), numbered as everywhere.
    const last = await run(['show', '9a8b7c6d', '--turn', '6', '--db', db]);
    expect(numbered(last.stdout).map((t) => t.turn)).toEqual([4, 5, 6]);
  });

  it('numbers a resumed session on from the turns it inherited, as the pairs file of a replay does', async () => {
    const prefix = '55555555';
    const shown = await run(['show', prefix, '--db', db]);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(/continues session \w+ \(its first 4 messages are shared\)/);
    const turns = numbered(shown.stdout);
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3]);

    // The recorded provider answers each turn with the recorded one; the pairs file names each turn.
    const pairsFile = join(dir.path, 'pairs.jsonl');
    const replay = await run(['replay', prefix, '--db', db, '--out', pairsFile, '--force'], {
      cwd: dir.path,
    });
    expect(replay.exitCode, replay.stderr).toBe(0);
    const pairs = readFileSync(pairsFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { turn: number; original: { content: string } });
    // Only the session's own turn is replayed, and it is the one show calls turn 3.
    expect(pairs.map((pair) => pair.turn)).toEqual([3]);
    for (const pair of pairs) {
      const answer = await turnJson(prefix, pair.turn);
      expect(answer.response.parts.map((part) => part.text).join('')).toBe(pair.original.content);
      const { file, line } = answer.response.source;
      expect(`${file}:${line}`).toBe(turns.find((t) => t.turn === pair.turn)?.where);
    }
    // An inherited turn is shown as the model saw it then.
    expect((await turnJson(prefix, 1)).response.parts[0]?.text).toBe('Done one');
    const none = await run(['show', prefix, '--turn', '4', '--db', db]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('has 3 turn(s); no turn 4');
  });

  it('says in --help what the number is', async () => {
    const help = await run(['show', '--help']);
    expect(help.stdout).toContain('"assistant · turn N"');
    expect(help.stdout).toContain('Each model turn is numbered');
  });
});
