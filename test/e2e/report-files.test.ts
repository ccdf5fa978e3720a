import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';

// The files --junit and --report write after a run: checked before anything runs, written whole, and never put in
// the place of what is not a file. Before, `--junit /dev/null` renamed a regular file onto the device node (as
// root: /dev/null itself, for every program), a missing folder was found only at the end of the run, as a raw
// ENOENT naming a `.tmp` file, and a folder as --junit left its `.tmp` behind.

let dir: ReturnType<typeof tempDir>;
let db: string;
let runId: string;

beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  expect((await run(['ingest', 'sample-sessions', '--db', db])).exitCode).toBe(0);
  const replayed = await run(['replay', '--all', '--db', db, '--out', join(dir.path, 'pairs.jsonl')]);
  expect(replayed.exitCode, replayed.stderr).toBe(0);
  runId = (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as { id: string }[])[0]
    ?.id as string;
});
afterAll(() => dir.remove());

const check = (args: string[]) => run(['runs', 'check', runId, '--db', db, '--min-recall', '1%', ...args]);

describe('--junit and --report', () => {
  it('writes through a FIFO in place: its reader gets the XML, and the FIFO stays a FIFO', async () => {
    const fifo = join(dir.path, 'junit.fifo');
    execFileSync('mkfifo', [fifo]);
    // Bounded: a FIFO replaced by a file would leave its reader waiting for a writer for ever.
    const reader = execa('cat', [fifo], { reject: false, timeout: 30_000 });
    const checked = await check(['--junit', fifo]);
    expect(checked.exitCode, checked.stderr).toBe(0);
    expect(String((await reader).stdout)).toMatch(/^<\?xml[\s\S]*<testsuite/);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'leaves a device node a device (as root, where renaming onto it works)',
    async () => {
      // A null device of our own, made as /dev/null is (character device 1, 3).
      const device = join(dir.path, 'null');
      execFileSync('mknod', [device, 'c', '1', '3']);
      const checked = await check(['--junit', device]);
      expect(checked.exitCode, checked.stderr).toBe(0);
      expect(lstatSync(device).isCharacterDevice()).toBe(true);
    },
  );

  it('verify --junit writes through a FIFO in place too, and refuses a missing folder before the command runs', async () => {
    const watched = join(dir.path, 'watched');
    mkdirSync(watched);
    const fifo = join(dir.path, 'verify.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = execa('cat', [fifo], { reject: false, timeout: 30_000 });
    const verified = await run(['verify', '--watch', watched, '--junit', fifo, '--', 'true'], {
      env: { XDG_CACHE_HOME: join(dir.path, 'cache') },
    });
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(String((await reader).stdout)).toMatch(/^<\?xml[\s\S]*<testsuite/);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    const marker = join(dir.path, 'ran');
    const refused = await run([
      'verify',
      '--watch',
      watched,
      '--junit',
      join(dir.path, 'no', 'j.xml'),
      '--',
      'touch',
      marker,
    ]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('its folder');
    expect(() => statSync(marker)).toThrow();
  });

  it('replaces what a symbolic link names and keeps the link', async () => {
    const real = join(dir.path, 'real.xml');
    const link = join(dir.path, 'link.xml');
    writeFileSync(real, 'old');
    symlinkSync(real, link);
    expect((await check(['--junit', link])).exitCode).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(real);
    expect(readFileSync(real, 'utf8')).toMatch(/^<\?xml/);
  });

  it('refuses a missing folder or a folder as the file before anything runs (exit 2)', async () => {
    const missing = join(dir.path, 'no', 'such');
    const junit = await check(['--junit', join(missing, 'j.xml')]);
    expect(junit.exitCode).toBe(2);
    expect(junit.stderr).toContain(
      `--junit: cannot write ${join(missing, 'j.xml')}: its folder ${missing} does not exist`,
    );
    const folder = join(dir.path, 'folder');
    mkdirSync(folder);
    const asFile = await check(['--junit', folder]);
    expect(asFile.exitCode).toBe(2);
    expect(asFile.stderr).toContain(`--junit: ${folder} is a directory`);
    expect(() => statSync(`${folder}.tmp`)).toThrow();
    const nothing = await check(['--report', '/dev/null']);
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toContain('--report /dev/null is not a file: it names the files /dev/null.md');
    expect(() => statSync('/dev/null.md')).toThrow();
    mkdirSync(join(dir.path, 'page.md'));
    const report = await check(['--report', join(dir.path, 'page')]);
    expect(report.exitCode).toBe(2);
    expect(report.stderr).toContain(`--report: ${join(dir.path, 'page.md')} is a directory`);

    // A replay finds it before it creates a run: none is added.
    const before = (await run(['runs', '--db', db, '--json'])).stdout;
    const replayed = await run([
      'replay',
      '--all',
      '--db',
      db,
      '--out',
      join(dir.path, 'more.jsonl'),
      '--report',
      join(missing, 'report'),
    ]);
    expect(replayed.exitCode).toBe(2);
    expect(replayed.stderr).toContain(`--report: cannot write ${join(missing, 'report.md')}`);
    expect((await run(['runs', '--db', db, '--json'])).stdout).toBe(before);
  });
});

describe('two outputs of one command', () => {
  it('are refused when they are one file, or one is a file it reads (exit 2): nothing is written over', async () => {
    // Before, `replay --out X --junit X` ended with X holding the JUnit XML and the run's pairs gone.
    const same = join(dir.path, 'same.jsonl');
    writeFileSync(same, '');
    const report = join(dir.path, 'verdict');
    for (const args of [
      ['replay', '--all', '--db', db, '--out', same, '--force', '--junit', same],
      ['replay', '--all', '--db', db, '--out', `${report}.md`, '--report', report],
      [
        'runs',
        'check',
        runId,
        '--db',
        db,
        '--min-recall',
        '1%',
        '--junit',
        `${report}.html`,
        '--report',
        report,
      ],
    ]) {
      const refused = await run(args);
      expect(refused.exitCode, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toMatch(/is the file (--out|--report|--junit) .* writes too/);
    }
    expect(readFileSync(same, 'utf8')).toBe('');
    // Nor is a file the command reads an output: a system prompt, a gates file committed beside the CI job.
    const prompt = join(dir.path, 'system.txt');
    writeFileSync(prompt, 'You are a careful engineer.\n');
    const gates = join(dir.path, 'gates.toml');
    writeFileSync(gates, '[gates]\nmin-recall = "1%"\n');
    for (const args of [
      ['export', '--db', db, '--system-prompt', prompt, '--out', prompt],
      ['export', '--db', db, '--tokenizer', prompt, '--out', prompt],
      ['replay', '--all', '--db', db, '--system-prompt', prompt, '--out', prompt, '--force'],
      ['replay', '--all', '--db', db, '--out', same, '--force', '--gates', gates, '--junit', gates],
      ['runs', 'check', runId, '--db', db, '--gates', gates, '--junit', gates],
    ]) {
      const refused = await run(args);
      expect(refused.exitCode, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toMatch(
        /is the file --(system-prompt|gates|tokenizer) .* names, which this command reads: writing there would destroy it/,
      );
    }
    expect(readFileSync(prompt, 'utf8')).toBe('You are a careful engineer.\n');
    expect(readFileSync(gates, 'utf8')).toBe('[gates]\nmin-recall = "1%"\n');
    // A device takes both.
    const both = await run(['replay', '6f1c2a34', '--db', db, '--out', '/dev/null', '--junit', '/dev/null']);
    expect(both.exitCode, both.stderr).toBe(0);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });
});

describe('the store as an output', () => {
  it('is refused for export --out, replay --out (even with --force or through a link) and --junit (exit 2)', async () => {
    // `--out` and `--db` swapped: export renamed its dataset onto the store, replay --force truncated it.
    const before = (await run(['sessions', '--db', db, '--json'])).stdout;
    const link = join(dir.path, 'store-link.jsonl');
    symlinkSync(db, link);
    const attempts = [
      ['export', '--db', db, '--out', db],
      ['replay', '--all', '--db', db, '--out', db, '--force'],
      ['replay', '--all', '--db', db, '--out', link, '--force'],
      ['replay', '--all', '--db', db, '--out', join(dir.path, 'p.jsonl'), '--junit', db],
      ['runs', 'check', runId, '--db', db, '--min-recall', '1%', '--junit', `${db}-wal`],
    ];
    for (const args of attempts) {
      const refused = await run(args);
      expect(refused.exitCode, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toMatch(
        /is (SQLite's wal file of )?the store \(--db .*\): writing there would destroy it/,
      );
    }
    expect((await run(['sessions', '--db', db, '--json'])).stdout).toBe(before);
  });

  it('and so is a log the store was read from: the agent’s own history is not written over (exit 2)', async () => {
    const logs = join(dir.path, 'logs', '-home-ada-todo-api');
    mkdirSync(logs, { recursive: true });
    const log = join(logs, '6f1c2a34-7b1d-4c55-9d0e-2a8b3c4d5e61.jsonl');
    copyFileSync(join(root, 'sample-sessions', 'claude-code', '-home-ada-todo-api', basename(log)), log);
    expect((await run(['ingest', join(dir.path, 'logs'), '--db', db])).exitCode).toBe(0);
    const before = readFileSync(log);
    for (const args of [
      ['export', '--db', db, '--out', log],
      ['replay', '--all', '--db', db, '--out', log, '--force'],
      ['replay', '--all', '--db', db, '--out', join(dir.path, 'q.jsonl'), '--junit', log],
      ['runs', 'check', runId, '--db', db, '--min-recall', '1%', '--junit', log],
    ]) {
      const refused = await run(args);
      expect(refused.exitCode, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(`${log} is a claude-code log the store was read from`);
    }
    expect(readFileSync(log).equals(before)).toBe(true);
  });

  it('and so is a run’s pairs file, for export --out (--split too, a link too) and --junit (exit 2)', async () => {
    // Before, `export --from run:… --out` on the run's own pairs file wrote the dataset over the pairs it read:
    // the run's answers were gone, and the next export of it read nothing.
    const pairs = join(dir.path, 'pairs.jsonl');
    const before = readFileSync(pairs);
    const link = join(dir.path, 'pairs-link.jsonl');
    symlinkSync(pairs, link);
    for (const args of [
      ['export', '--db', db, '--from', `run:${runId}`, '--out', pairs],
      ['export', '--db', db, '--out', link],
      [
        'export',
        '--db',
        db,
        '--from',
        `run:${runId}`,
        '--out',
        join(dir.path, 'set.jsonl'),
        '--split',
        '0.5',
      ],
      ['runs', 'check', runId, '--db', db, '--min-recall', '1%', '--junit', pairs],
    ]) {
      // --split writes set.train.jsonl and set.validation.jsonl: the first made to land on the pairs file here.
      if (args.includes('--split')) symlinkSync(pairs, join(dir.path, 'set.train.jsonl'));
      const refused = await run(args);
      expect(refused.exitCode, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toMatch(
        new RegExp(`holds the pairs of replay run ${runId}: writing there would destroy them`),
      );
    }
    expect(readFileSync(pairs).equals(before)).toBe(true);
    // Another file is written as ever.
    const dataset = join(dir.path, 'dataset.jsonl');
    expect((await run(['export', '--db', db, '--from', `run:${runId}`, '--out', dataset])).exitCode).toBe(0);
    expect(readFileSync(dataset, 'utf8').split('\n').filter(Boolean).length).toBeGreaterThan(0);
    // A device is nobody's pairs file, though a run streamed its pairs there (the test above did, to /dev/null).
    const device = await run(['export', '--db', db, '--from', `run:${runId}`, '--out', '/dev/null']);
    expect(device.exitCode, device.stderr).toBe(0);
  });
});
