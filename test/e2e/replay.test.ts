import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bin, run, tempDir } from '../helpers/cli.js';
import { startModelServer } from '../helpers/model-server.js';

let dir: ReturnType<typeof tempDir>;
let db: string;
let out: string;
beforeEach(() => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  out = join(dir.path, 'pairs.jsonl');
});
afterEach(() => dir.remove());

const pairs = () =>
  readFileSync(out, 'utf8')
    .trimEnd()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe('replay with the recorded provider', () => {
  it('runs the whole pipeline on the sample sessions; every completion equals its original', async () => {
    const result = await run(['replay', 'sample-sessions', '--db', db, '--out', out, '--json']);
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      model: 'recorded',
      mode: 'forced',
      status: 'done',
      turnsDone: 30,
      turnsFailed: 0,
    });
    expect(report.matches).toEqual({ exact: 20, normalized: 0, differs: 0, none: 10 });
    expect(report.precision).toBe(1);
    expect(report.recall).toBe(1);
    const written = pairs();
    expect(written).toHaveLength(30);
    expect(new Set(written.map((p) => p.agent))).toEqual(new Set(['claude-code', 'opencode']));
    for (const pair of written) {
      expect(pair.schema).toBe('replay-history.pair/v2');
      expect(pair.run).toBe(report.id);
      expect(pair.completion).toEqual(pair.original);
      expect(pair.messages[0].role).toBe('system');
      expect(pair.tools.length).toBeGreaterThan(5);
    }
    // The recorded tool results are in the context, right after the calls that asked for them.
    const fix = written.find(
      (p) =>
        p.turn === 3 &&
        p.messages.some((m: { content?: string }) => m.content?.includes?.('Expected length: 5')),
    );
    expect(fix).toBeDefined();
    const toolAt = fix.messages.findIndex(
      (m: { role: string; content: string }) => m.role === 'tool' && m.content.includes('Expected length: 5'),
    );
    expect(fix.messages[toolAt - 1].tool_calls[0].function.name).toBe('Bash');
    const runs = await run(['runs', '--db', db, '--json']);
    expect(JSON.parse(runs.stdout)).toEqual([expect.objectContaining({ id: report.id, turnsDone: 30 })]);
  });

  it('resumes a run left running on another machine, saying it cannot ask that machine; an old run as before', async () => {
    const first = await run(['replay', 'sample-sessions', '--db', db, '--out', out, '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const id = JSON.parse(first.stdout).id as string;
    const store = new Database(db);
    const leave = (owner: string | null) =>
      store
        .prepare("UPDATE runs SET status = 'running', finished_at = NULL, owner = ? WHERE id = ?")
        .run(owner, id);
    // Left running by a process on another machine sharing the store: not judged from here.
    leave(JSON.stringify({ pid: 1, host: 'elsewhere.example' }));
    const listed = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout);
    expect(listed).toEqual([expect.objectContaining({ id, status: 'running' })]);
    const resumed = await run(['replay', '--resume', id, '--db', db, '--json']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`run ${id} was started on elsewhere.example, which cannot be asked`);
    // A run from before the owner was kept: as it was, running until resumed.
    leave(null);
    expect(JSON.parse((await run(['runs', '--db', db, '--json'])).stdout)).toEqual([
      expect.objectContaining({ id, status: 'running' }),
    ]);
    const again = await run(['replay', '--resume', id, '--db', db, '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('cannot be asked');
    store.close();
    // Nothing was asked again: every turn was done.
    expect(pairs()).toHaveLength(30);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'done', turnsDone: 30 });
  });

  it('resumes a run whose pairs file lost pairs (cut, removed) by replaying their sessions again, and says so', async () => {
    const first = await run(['replay', 'sample-sessions', '--db', db, '--out', out, '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const id = JSON.parse(first.stdout).id as string;
    const all = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    const keys = (lines: { session: string; turn: number }[]) =>
      lines.map((p) => `${p.session}#${p.turn}`).sort();
    const expected = keys(all.map((line) => JSON.parse(line)));
    // Cut: the store has every turn answered, the file 12 of the pairs.
    writeFileSync(out, `${all.slice(0, 12).join('\n')}\n`);
    const cut = await run(['replay', '--resume', id, '--db', db, '--json']);
    expect(cut.exitCode, cut.stderr).toBe(0);
    expect(cut.stderr).toContain(`holds no pair for 18 turn(s) the run had answered`);
    expect(keys(pairs())).toEqual(expected);
    expect(JSON.parse(cut.stdout)).toMatchObject({ status: 'done', turnsDone: 30, turnsFailed: 0 });
    // Removed: every session again.
    rmSync(out);
    const removed = await run(['replay', '--resume', id, '--db', db, '--json']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(removed.stderr).toContain('holds no pair for 30 turn(s)');
    expect(keys(pairs())).toEqual(expected);
    // Nothing lost: a resume now finds nothing to do and says nothing of it.
    const again = await run(['replay', '--resume', id, '--db', db, '--json']);
    expect(again.stderr).not.toContain('holds no pair');
    expect(keys(pairs())).toEqual(expected);
  });

  it('refuses to write into a pairs file that already holds pairs, unless --append or --force', async () => {
    writeFileSync(out, '{"schema":"replay-history.pair/v1"}\n');
    const refused = await run(['replay', 'sample-sessions', '--db', db, '--out', out]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`error: ${out} already holds pairs`);
    expect(refused.stderr).toContain('hint: pass --append to add to it, --force to overwrite it');
    const forced = await run(['replay', 'sample-sessions', '--db', db, '--out', out, '--force']);
    expect(forced.exitCode).toBe(0);
    expect(pairs()).toHaveLength(30);
    const appended = await run(['replay', '6f1c2a34', '--db', db, '--out', out, '--append']);
    expect(appended.exitCode).toBe(0);
    expect(pairs()).toHaveLength(35);
  });

  it('after SIGKILL mid-run, --resume finishes it with no torn line, no pair lost or duplicated', async () => {
    // A slow model (30 turns two at a time: about 9 s), so that the kill lands while turns are in flight, after
    // the checks made while it runs.
    const server = await startModelServer({ responders: [() => ({ text: 'ok', delayMs: 600 })] });
    try {
      const args = ['replay', 'sample-sessions', '--db', db, '--out', out, '--model', 'openai:scripted'];
      const child = execa(
        process.execPath,
        [bin, ...args, '--base-url', server.baseURL, '--concurrency', '2'],
        {
          reject: false,
        },
      );
      for (let i = 0; i < 200 && lineCount() < 4; i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      // While it runs: `runs` says so, and a resume from a second process is refused before it touches the pairs
      // file (which it would write from two processes, after cutting the other's line in progress).
      const running = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout);
      expect(running).toEqual([expect.objectContaining({ status: 'running', error: null })]);
      const early = await run(['replay', '--resume', running[0].id, '--db', db, '--json']);
      expect(early.exitCode, early.stderr).toBe(2);
      expect(early.stderr).toContain(`is still running (process ${child.pid} on this machine)`);
      expect(early.stderr).toContain(`kill ${child.pid}`);
      // An export of it takes what it has written so far, and says the run goes on.
      const early2 = await run([
        'export',
        '--db',
        db,
        '--from',
        `run:${running[0].id}`,
        '--out',
        `${out}.set`,
      ]);
      expect(early2.exitCode, early2.stderr).toBe(0);
      expect(early2.stderr).toContain(
        `run ${running[0].id} is still running (process ${child.pid}): the pairs it has written so far are exported`,
      );
      // Nor does another run write into its file meanwhile: --force would empty it, --append cut its line.
      for (const flag of ['--force', '--append']) {
        const lines = lineCount();
        const other = await run(['replay', 'sample-sessions', '--db', db, '--out', out, flag]);
        expect(other.exitCode, other.stderr).toBe(2);
        expect(other.stderr).toContain(
          `${out} is being written by run ${running[0].id} (process ${child.pid} on this machine)`,
        );
        expect(lineCount()).toBeGreaterThanOrEqual(lines);
      }
      child.kill('SIGKILL');
      await child;
      const before = lineCount();
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(30);
      // Killed without a word: the store still has it running, and `runs` tells what happened and how to go on.
      const listed = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout);
      expect(listed).toEqual([expect.objectContaining({ status: 'interrupted' })]);
      expect(listed[0].error).toBe(
        `its process (pid ${child.pid}) ended before it finished; continue with: replay-history replay --resume ${listed[0].id}`,
      );
      const shown = await run(['runs', listed[0].id, '--db', db]);
      expect(shown.stdout).toContain('interrupted (its process');
      // No gate judges a run that did not finish: its figures cover only the turns it had done.
      const judged = await run(['runs', 'check', listed[0].id, '--db', db, '--max-failed-turns', '0']);
      expect(judged.exitCode, judged.stderr).toBe(2);
      expect(judged.stderr).toContain(`run ${listed[0].id} did not finish (its process`);
      expect(judged.stderr).toContain(
        `hint: finish it first: replay-history replay --resume ${listed[0].id}`,
      );
      const asked = server.chatRequests().length;
      const resumed = await run(['replay', '--resume', listed[0].id, '--db', db, '--json']);
      expect(resumed.exitCode).toBe(0);
      const written = pairs();
      const keys = written.map((p) => `${p.session}#${p.turn}`);
      expect(keys).toHaveLength(30);
      expect(new Set(keys).size).toBe(30);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'done', turnsDone: 30, turnsFailed: 0 });
      const finished = await run(['runs', 'check', listed[0].id, '--db', db, '--max-failed-turns', '0']);
      expect(finished.exitCode, finished.stderr).toBe(0);
      // Turns already written were not asked again: the resume asked only for the rest (and what was in flight).
      expect(server.chatRequests().length - asked).toBe(30 - before);
    } finally {
      await server.close();
    }
  });
});

const lineCount = (): number => {
  try {
    return readFileSync(out, 'utf8').split('\n').length - 1;
  } catch {
    return 0;
  }
};
