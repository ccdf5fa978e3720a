import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { type ModelServer, startModelServer } from '../helpers/model-server.js';

// Every answer a replay gives about failure must be one a user can act on: why turns failed (each cause, how
// often, where first), a server that is not there stops the run at once, a run that answered nothing is a
// failed run, a stopped run can always be resumed, and options that contradict each other are refused.
let dir: ReturnType<typeof tempDir>;
let db: string;
let server: ModelServer | undefined;

beforeAll(async () => {
  const setup = tempDir();
  db = join(setup.path, 'replay.db');
  expect((await run(['ingest', 'sample-sessions', '--db', db])).exitCode).toBe(0);
});
beforeEach(() => {
  dir = tempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  dir.remove();
});

const out = () => join(dir.path, 'pairs.jsonl');
const replay = (args: string[]) => run(['replay', '--db', db, '--out', out(), ...args]);

/** A port nothing listens on: one that was free a moment ago. */
async function deadPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

interface Figures {
  id: string;
  status: string;
  error: string | null;
  turnsDone: number;
  turnsFailed: number;
  precision: number | null;
  recall: number | null;
  wallSeconds: number | null;
  failures: { cause: string; count: number; first: { sessionId: string; turn: number } }[];
}

describe('failed turns say why', () => {
  it('lists each distinct cause with its count and first turn in replay, replay --json, runs RUN_ID and its --json', async () => {
    // Odd-length contexts get a context-length 400 whose text names their size; the rest a 500.
    server = await startModelServer({
      responders: [
        (request) =>
          (request.messages?.length ?? 0) % 2 === 1
            ? {
                error: {
                  status: 400,
                  message: `context_length_exceeded: ${request.messages?.length} messages`,
                },
              }
            : { error: { status: 500, message: 'upstream exploded' } },
      ],
    });
    const args = ['--all', '--model', 'openai:m', '--base-url', server.baseURL, '--retries', '0'];
    const text = await replay([...args, '--force']);
    expect(text.exitCode).toBe(1);
    const json = await replay([...args, '--force', '--json']);
    expect(json.exitCode).toBe(1);
    const report = JSON.parse(json.stdout) as Figures;

    // Counted independently from what the server was asked and how it answered.
    const asked = server.chatRequests().slice(-report.turnsFailed);
    const by400 = asked.filter((r) => r.reply?.error?.status === 400).length;
    const by500 = asked.filter((r) => r.reply?.error?.status === 500).length;
    expect(by400 + by500).toBe(report.turnsFailed);
    expect(by400).toBeGreaterThan(0);
    expect(by500).toBeGreaterThan(0);

    // Causes that differ only in a number are one cause; 400 and 500 stay apart.
    expect(
      report.failures.map((f) => [f.cause.replace(/\d+ messages/, 'N messages'), f.count]).sort(),
    ).toEqual(
      [
        ['openai:m: HTTP 400: context_length_exceeded: N messages', by400],
        ['openai:m: HTTP 500: upstream exploded', by500],
      ].sort(),
    );
    for (const failure of report.failures) {
      expect(failure.first.sessionId).toMatch(/^[0-9a-f]{8}/);
      expect(failure.first.turn).toBeGreaterThan(0);
    }
    // Every turn failed: the run failed, and no share of calls is made up for it.
    expect(report).toMatchObject({ status: 'failed', error: 'every turn failed', turnsDone: 0 });
    expect(report.precision).toBeNull();

    for (const output of [text.stdout, (await run(['runs', report.id, '--db', db])).stdout]) {
      expect(output).toMatch(/failed \(every turn failed\)/);
      expect(output).toMatch(/failed {6}\d+ × openai:m: HTTP (400|500): .* \(first: [0-9a-f]{8} turn \d+\)/);
      expect(output).toContain(`${by500} × openai:m: HTTP 500: upstream exploded (first: `);
      expect(output).toContain('precision –');
      expect(output).not.toContain('precision 100.0%');
    }
    const shown = JSON.parse((await run(['runs', report.id, '--db', db, '--json'])).stdout) as Figures;
    expect(shown.failures).toEqual(report.failures);
    // The same run, the same wall time, whichever command shows it.
    expect(shown.wallSeconds).toBe(report.wallSeconds);
  });

  it('a server that is not there stops the run at the first call, after the retries', async () => {
    const port = await deadPort();
    const result = await replay([
      '--all',
      '--force',
      '--json',
      '--model',
      'openai:m',
      '--base-url',
      `http://127.0.0.1:${port}/v1`,
      '--retries',
      '1',
      '--concurrency',
      '1',
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      `error: openai:m: cannot connect (ECONNREFUSED) to http://127.0.0.1:${port}/v1: connect ECONNREFUSED`,
    );
    expect(result.stderr).toMatch(/hint: nothing more was asked; fix it and continue with --resume run_/);
    const [listed] = (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as Figures[]).slice(-1);
    expect(listed).toMatchObject({ status: 'failed', turnsDone: 0, turnsFailed: 0 });
  });

  it('a host that does not resolve stops the run too', async () => {
    const result = await replay([
      '--all',
      '--force',
      '--model',
      'openai:m',
      '--base-url',
      'http://replay-history-test.invalid/v1',
      '--retries',
      '0',
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /error: openai:m: cannot connect \((ENOTFOUND|EAI_AGAIN)\) to http:\/\/replay-history-test\.invalid\/v1/,
    );
  });
});

describe('a replay stopped by a signal', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
    ['SIGINT', 130],
  ] as const)('%s marks the run interrupted, says how to resume, and exits %i', async (signal, code) => {
    // The first answer comes at once, the next hangs: the signal lands while a call is in flight.
    server = await startModelServer({ turns: [{ text: 'first' }, { text: 'late', delayMs: 60_000 }] });
    const child = execa(
      'node',
      [
        bin,
        'replay',
        '6f1c2a34',
        '--db',
        db,
        '--out',
        out(),
        '--force',
        '--model',
        'openai:m',
        '--base-url',
        server.baseURL,
        '--concurrency',
        '1',
      ],
      { reject: false, cwd: root, env: { NO_COLOR: '1' } },
    );
    const deadline = Date.now() + 30_000;
    while (server.chatRequests().length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.chatRequests()).toHaveLength(2);
    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(code);
    expect(String(result.stderr)).toMatch(
      new RegExp(`interrupted \\(${signal}\\); continue with: replay-history replay --resume run_`),
    );
    const [last] = (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as Figures[]).slice(-1);
    expect(last).toMatchObject({ status: 'interrupted', error: `stopped by ${signal}`, turnsDone: 1 });
    // The pair of the answered turn is whole; the resume hint works.
    expect(readFileSync(out(), 'utf8').trimEnd().split('\n')).toHaveLength(1);
    server.push({ text: 'again' }, { text: 'again' }, { text: 'again' }, { text: 'again' });
    // `latest`: the run started last, the one just stopped
    const resumed = await run(['replay', '--resume', 'latest', '--db', db, '--json']);
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      id: last?.id,
      status: 'done',
      turnsDone: 5,
      turnsFailed: 0,
    });
  });
});

describe('where the pairs go', () => {
  const replayTo = (target: string, args: string[] = []) =>
    run(['replay', '--all', '--db', db, '--out', target, ...args]);
  it('refuses a folder, or a path whose folder is missing, before anything runs (exit 2, no run made)', async () => {
    const before = await run(['runs', '--db', db, '--json']);
    const missing = join(dir.path, 'no', 'such', 'pairs.jsonl');
    const absent = await replayTo(missing);
    expect(absent.exitCode).toBe(2);
    expect(absent.stderr).toContain(
      `cannot write ${missing}: its folder ${join(dir.path, 'no', 'such')} does not exist`,
    );
    expect(absent.stderr).not.toContain('ENOENT: no such file');
    const folder = await replayTo(dir.path, ['--force']);
    expect(folder.exitCode).toBe(2);
    // Before, a folder was taken for a pairs file that "already holds pairs", and --force for a truncation.
    expect(folder.stderr).toContain(`cannot write ${dir.path}: it is a directory`);
    expect(folder.stderr).not.toContain('already holds pairs');
    expect((await run(['runs', '--db', db, '--json'])).stdout).toBe(before.stdout);
  });

  it('writes to a FIFO as a stream, and refuses --append and --resume to one (it cannot be read back)', async () => {
    const fifo = join(dir.path, 'pairs.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = execa('cat', [fifo], { reject: false });
    const replayed = await replayTo(fifo);
    const read = await reader;
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    const pairs = String(read.stdout)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { turn: number });
    expect(pairs.length).toBeGreaterThan(5);
    const appended = await replayTo(fifo, ['--append']);
    expect(appended.exitCode).toBe(2);
    expect(appended.stderr).toContain(`--append reads the pairs already in --out, and ${fifo} is a FIFO`);
    const [last] = (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as Figures[]).slice(-1);
    const resumed = await run(['replay', '--resume', (last as Figures).id, '--db', db]);
    expect(resumed.exitCode).toBe(2);
    expect(resumed.stderr).toContain(
      `run ${(last as Figures).id} wrote its pairs to ${fifo}, a FIFO: they cannot be read back to go on from them`,
    );
    // Nor exported: opening the FIFO to read its pairs waited for a writer for ever.
    const exported = await execa(
      'node',
      [
        bin,
        'export',
        '--db',
        db,
        '--from',
        `run:${(last as Figures).id}`,
        '--out',
        join(dir.path, 'x.jsonl'),
      ],
      { reject: false, cwd: root, timeout: 60_000 },
    );
    expect(exported.timedOut).toBe(false);
    expect(exported.exitCode).toBe(2);
    expect(String(exported.stderr)).toContain(
      `run ${(last as Figures).id} wrote its pairs to ${fifo}, which is not a file: they were not kept`,
    );
  });

  it('ends when the reader of --out /dev/stdout goes away, instead of waiting on a full pipe for ever', async () => {
    // The pairs file was opened to read as well: on a pipe that made the replay a reader of its own pipe, so once
    // `head` left, the pipe filled and the next write never returned (SIGTERM could not end it either). A shell
    // pipe, as a user types it: node's own child stdio is a socket, which /dev/stdout cannot reopen.
    const piped = execa(
      'sh',
      ['-c', `node "${bin}" replay --all --db "${db}" --out /dev/stdout --force 2>/dev/null | head -c 2000`],
      { reject: false, cwd: root, env: { NO_COLOR: '1' }, timeout: 60_000 },
    );
    const result = await piped;
    expect(result.timedOut, 'the replay was still writing to a pipe nobody read').toBe(false);
    expect(String(result.stdout)).toMatch(/^\{"schema":"replay-history\.pair\/v2"/);
    expect(String(result.stdout).length).toBe(2000);
  });

  it('with --out - or /dev/stdout piped, stdout holds the pairs only (the figures go to stderr), and no file named -', async () => {
    for (const target of ['-', '/dev/stdout']) {
      const piped = await execa(
        'sh',
        ['-c', `node "${bin}" replay --all --db "${db}" --out ${target} --force | cat`],
        { reject: false, cwd: dir.path, env: { NO_COLOR: '1' }, timeout: 60_000 },
      );
      expect(piped.exitCode, String(piped.stderr)).toBe(0);
      const lines = String(piped.stdout).trim().split('\n');
      // Before, the run's figures followed the pairs on stdout: a JSONL reader met 9 lines that were not JSON.
      for (const line of lines) expect(() => JSON.parse(line), line.slice(0, 80)).not.toThrow();
      expect(lines.length).toBeGreaterThan(5);
      expect(String(piped.stderr)).toMatch(/^turns +\d+ done/m);
      expect(existsSync(join(dir.path, '-'))).toBe(false);
    }
    // pipefail: the replay's exit code, not cat's.
    const json = await execa(
      'bash',
      ['-o', 'pipefail', '-c', `node "${bin}" replay --all --db "${db}" --out - --json | cat`],
      {
        reject: false,
        cwd: dir.path,
      },
    );
    expect(json.exitCode).toBe(2);
    expect(String(json.stderr)).toContain('--json and --out /dev/stdout both write to stdout');
  });

  it('refuses a socket as --out before anything runs, in words (exit 2)', async () => {
    // What `--out /dev/stdout` is under a parent whose stdio is a socket (node's child_process, some CI runners).
    const child = await execa(
      'node',
      [bin, 'replay', '--all', '--db', db, '--out', '/dev/stdout', '--force'],
      {
        reject: false,
        cwd: root,
        env: { NO_COLOR: '1' },
      },
    );
    expect(child.exitCode).toBe(2);
    expect(String(child.stderr)).toContain(
      'cannot write /dev/stdout: it is an open descriptor (socket), which cannot be opened as a file',
    );
    expect(String(child.stderr)).not.toContain('set DEBUG');
  });

  it('says a write that failed in words, with the run to resume (exit 1)', async () => {
    // /dev/full refuses every write with ENOSPC, as a full disk does.
    const full = await replayTo('/dev/full');
    expect(full.exitCode).toBe(1);
    expect(full.stderr).toContain('cannot write /dev/full: no space left on the device (ENOSPC)');
    expect(full.stderr).not.toContain('set DEBUG');
  });
});

describe('options that contradict each other', () => {
  it('--append --force is refused before the pairs file is touched', async () => {
    expect((await replay(['6f1c2a34', '--force'])).exitCode).toBe(0);
    const before = readFileSync(out(), 'utf8');
    const result = await replay(['--all', '--append', '--force']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: --append and --force contradict each other');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(out(), 'utf8')).toBe(before);
  });

  it('--all with targets is refused', async () => {
    const result = await replay(['--all', '6f1c2a34']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      'error: --all replays every stored session: drop it or the targets (6f1c2a34)',
    );
    expect(existsSync(out())).toBe(false);
  });

  it('--retries takes a whole number from 0 (a negative or a word was taken as is)', async () => {
    for (const value of ['-2', 'three', '1.5']) {
      const result = await replay(['--all', '--retries', value]);
      expect(result.exitCode, value).toBe(2);
      expect(result.stderr).toContain(`error: --retries takes a whole number from 0, not '${value}'`);
      expect(existsSync(out())).toBe(false);
    }
  });

  it('--resume refuses options it would otherwise ignore', async () => {
    const first = JSON.parse((await replay(['6f1c2a34', '--force', '--json'])).stdout) as Figures;
    const result = await run(['replay', '--resume', first.id, '--db', db, '--model', 'openai:other']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      'error: --resume goes on with the options the run was started with: --model cannot be changed',
    );
  });
});

describe('run ids', () => {
  it('a unique prefix names a run, with or without run_, as session prefixes do', async () => {
    const first = JSON.parse((await replay(['6f1c2a34', '--force', '--json'])).stdout) as Figures;
    expect((await replay(['6f1c2a34', '--force'])).exitCode).toBe(0);
    const bare = first.id.slice('run_'.length);
    for (const prefix of [first.id.slice(0, first.id.length - 2), bare.slice(0, bare.length - 2)]) {
      const shown = await run(['runs', prefix, '--db', db, '--json']);
      expect(shown.exitCode, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout).id).toBe(first.id);
    }
    const none = await run(['runs', 'run_19990101', '--db', db]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain("no run matches 'run_19990101'");
    // Both runs start with run_2: the prefix is ambiguous, and the candidates are listed.
    const many = await run(['runs', 'run_2', '--db', db]);
    expect(many.exitCode).toBe(2);
    expect(many.stderr).toMatch(/'run_2' matches (\d+|more than 10) runs:\n {2}run_2/);
    expect(many.stderr).toContain('hint: give a longer prefix');
  });
});

describe('progress', () => {
  it('says each finished session on stderr when it is not a terminal, and nothing with --quiet', async () => {
    const result = await replay(['--all', '--force', '--json']);
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as Figures & { sessions: number };
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(report.sessions);
    lines.forEach((line, i) => {
      expect(line).toMatch(
        new RegExp(`^session ${i + 1}/${report.sessions} [0-9a-f]{8} done: \\d+ turn\\(s\\)$`),
      );
    });
    const total = lines.reduce((n, line) => n + Number(/done: (\d+)/.exec(line)?.[1]), 0);
    expect(total).toBe(report.turnsDone);

    const quiet = await replay(['--all', '--force', '--json', '--quiet']);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).toBe('');
  });

  it('draws a bar on a terminal instead: turns, sessions finished and the current session', async () => {
    const screen = join(dir.path, 'typescript');
    // `script` gives the program a real pseudo-terminal, as an interactive user has.
    await execa('script', ['-qec', `node ${bin} replay --all --db ${db} --out ${out()} --force`, screen], {
      reject: false,
      env: { CI: '' },
    });
    const text = readFileSync(screen, 'utf8');
    expect(text).toMatch(/replay [█░]{24} 30\/30 turns · [0-6]\/6 sessions · [0-9a-f]{8}/);
    expect(text).not.toMatch(/session 1\/6/);
    expect(text).toMatch(/turns {7}30 done, 0 failed, over 6 session\(s\)/);
  });
});

describe('a check the store cannot take', () => {
  it('is still said, with the run it belongs to, and the exit says it was not stored', async () => {
    // The store refuses the check's row as a full disk would (a trigger stands in for the disk).
    const store = join(dir.path, 'store.db');
    copyFileSync(db, store);
    const raw = new Database(store);
    raw.exec(
      "CREATE TRIGGER full BEFORE INSERT ON run_checks BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    raw.close();
    const watched = join(dir.path, 'watched');
    mkdirSync(watched);
    writeFileSync(join(watched, 'notes.txt'), 'unchanged\n');
    const result = await run(['replay', '--all', '--db', store, '--out', out(), '--watch', watched]);
    expect(result.exitCode).toBe(1);
    // the verdict of the check, then why it is not in the store
    expect(result.stderr).toMatch(
      new RegExp(`no changes under ${watched.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`),
    );
    expect(result.stderr).toMatch(
      /error: the side-effect check above could not be stored with run run_\w+: database or disk is full/,
    );
    // the run itself is whole
    const [last] = (JSON.parse((await run(['runs', '--db', store, '--json'])).stdout) as Figures[]).slice(-1);
    expect(last).toMatchObject({ status: 'done', turnsDone: 30 });
  });
});
