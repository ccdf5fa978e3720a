// `export --out PATH` with the real binary on every kind of PATH: a regular file is replaced atomically, a link
// keeps being a link, a FIFO, a device and /dev/stdout are written in place and stay what they were, a full device
// or a vanished reader is a plain exit 1, an export of nothing still writes its files, and --split refuses a
// device. As root /dev/full is writable and answers every write with ENOSPC.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, ran, run, tempDir } from '../helpers/cli.js';
import { isRoot, runUnprivileged } from '../helpers/unprivileged.js';

let dir: ReturnType<typeof tempDir>;
let store: string;

const rows = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { messages?: unknown[] });

const exported = (args: string[]) => run(['export', '--db', store, ...args]);
const noStack = /\n\s+at /;

beforeAll(async () => {
  dir = tempDir();
  store = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', 'sample-sessions', '--db', store]);
  expect(ingest.exitCode, ingest.stderr).toBe(0);
});
afterAll(() => dir.remove());

/** A fresh directory for one test's outputs, so listings show only what that export left. */
function place(name: string): string {
  const path = join(dir.path, name);
  mkdirSync(path);
  return path;
}

describe('files and links', () => {
  it('replaces a regular file atomically: a hard link to the old file still holds the old rows', async () => {
    const here = place('regular');
    const out = join(here, 'data.jsonl');
    writeFileSync(out, 'old\n');
    // Written in place, the old inode would get the rows too; renamed over, it keeps what it had.
    linkSync(out, join(here, 'old.jsonl'));
    const result = await exported(['--out', out]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(rows(readFileSync(out, 'utf8'))).toHaveLength(7);
    expect(readFileSync(join(here, 'old.jsonl'), 'utf8')).toBe('old\n');
    expect(readdirSync(here).sort()).toEqual(['data.jsonl', 'old.jsonl']);
    expect(result.stderr).toMatch(new RegExp(`written {5}${out} \\(\\d`));
  });

  it('follows a symlink: the link stays a link and its target gets the rows', async () => {
    const here = place('symlink');
    const target = join(here, 'real.jsonl');
    writeFileSync(target, 'old\n');
    const link = join(here, 'link.jsonl');
    symlinkSync('real.jsonl', link);
    const result = await exported(['--out', link, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(rows(readFileSync(target, 'utf8'))).toHaveLength(7);
    const report = JSON.parse(result.stdout);
    expect(report.files).toEqual([link]);
    expect(report.outputs).toEqual([
      expect.objectContaining({ path: link, kind: 'link', writesTo: target, inPlace: false, samples: 7 }),
    ]);
    expect(readdirSync(here).sort()).toEqual(['link.jsonl', 'real.jsonl']);
  });

  it('a write that cannot start is exit 1 with the path and cause, nothing created: a missing directory, a directory', async () => {
    const here = place('unwritable');
    const missing = await exported(['--out', join(here, 'nowhere', 'data.jsonl')]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain(
      `cannot write ${join(here, 'nowhere', 'data.jsonl')}: its directory does not exist`,
    );
    const directory = await exported(['--out', here]);
    expect(directory.exitCode).toBe(1);
    expect(directory.stderr).toContain(`cannot write ${here}: it is a directory`);
    for (const result of [missing, directory]) expect(result.stderr).not.toMatch(noStack);
    expect(readdirSync(here)).toEqual([]);
  });

  it.runIf(isRoot)(
    'a directory the user may not write to: EACCES, exit 1, the file there untouched',
    async () => {
      // nobody can read a copy of the store but not write in a root-owned directory.
      const common = place('group-store');
      chmodSync(common, 0o777);
      chmodSync(dir.path, 0o755);
      copyFileSync(store, join(common, 'replay.db'));
      chmodSync(join(common, 'replay.db'), 0o666);
      const locked = place('locked');
      chmodSync(locked, 0o755);
      const out = join(locked, 'data.jsonl');
      writeFileSync(out, 'old\n', { mode: 0o666 });
      const result = await runUnprivileged(
        ['export', '--db', join(common, 'replay.db'), '--out', out],
        common,
      );
      expect(result.exitCode, result.stderr).toBe(1);
      expect(result.stderr).toContain(`cannot write ${out}: permission denied (EACCES)`);
      expect(result.stderr).not.toMatch(noStack);
      expect(readFileSync(out, 'utf8')).toBe('old\n');
      expect(readdirSync(locked)).toEqual(['data.jsonl']);
    },
  );
});

describe('written in place', () => {
  it('a FIFO: the reader gets every row, it stays a FIFO, and no companion is put beside it', async () => {
    const here = place('fifo');
    const fifo = join(here, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const received = join(dir.path, 'from-fifo.jsonl');
    const reader = execa('sh', ['-c', `cat "${fifo}" > "${received}"`]);
    const result = await exported(['--format', 'sharegpt', '--out', fifo, '--json']);
    await reader;
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.samples.written).toBeGreaterThan(0);
    expect(rows(readFileSync(received, 'utf8'))).toHaveLength(report.samples.written);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(here)).toEqual(['fifo']);
    expect(report.files).toEqual([]);
    expect(result.stderr).not.toContain('dataset_info.json');
    const plain = await Promise.all([
      exported(['--out', fifo]),
      execa('sh', ['-c', `cat "${fifo}" > /dev/null`]),
    ]);
    expect(plain[0].stderr).toContain(`written     ${fifo} (FIFO, written in place,`);
  });

  it('a FIFO whose reader leaves early: EPIPE, exit 1, said plainly', async () => {
    const fifo = join(place('fifo-gone'), 'fifo');
    execFileSync('mkfifo', [fifo]);
    // The rows (about 500 KiB) are far more than a pipe holds, so writes go on after head has left.
    const reader = execa('sh', ['-c', `head -c 10 "${fifo}" > /dev/null`]);
    const result = await exported(['--unit', 'model-turn', '--out', fifo]);
    await reader;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      `cannot write ${fifo}: its reader went away before every row was written (EPIPE)`,
    );
    expect(result.stderr).not.toMatch(noStack);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it('/dev/full: exit 1 naming /dev/full and "no space", and /dev/full is still a character device', async () => {
    const before = statSync('/dev/full');
    const result = await exported(['--out', '/dev/full']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('cannot write /dev/full: no space left on the device (ENOSPC)');
    expect(result.stderr).not.toMatch(noStack);
    expect(result.stderr).not.toMatch(/^written/m);
    const after = lstatSync('/dev/full');
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe(before.rdev);
    expect(existsSync('/dev/full.train')).toBe(false);
  });

  it('/dev/null: written in place and said so; the report does not claim a file', async () => {
    const result = await exported(['--out', '/dev/null', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.files).toEqual([]);
    expect(report.outputs).toEqual([
      expect.objectContaining({ path: '/dev/null', kind: 'character device', inPlace: true, samples: 7 }),
    ]);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    const plain = await exported(['--out', '/dev/null']);
    expect(plain.stderr).toMatch(/written {5}\/dev\/null \(character device, written in place, \d/);
  });

  it('/dev/stdout as a Node parent spawns us (a socket): the rows on stdout, --json report on stderr', async () => {
    const result = await exported(['--out', '/dev/stdout']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(rows(result.stdout)).toHaveLength(7);
    expect(result.stderr).toContain('written     /dev/stdout (socket, written in place,');
    expect(result.stderr).not.toContain('.tmp');
    const json = await exported(['--out', '/dev/stdout', '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    const lines = rows(json.stdout);
    expect(lines).toHaveLength(7);
    for (const line of lines) expect(Array.isArray(line.messages)).toBe(true);
    expect(JSON.parse(json.stderr).outputs[0]).toMatchObject({
      path: '/dev/stdout',
      kind: 'socket',
      inPlace: true,
    });
  });

  it('/dev/stdout as a shell pipe: opened and written in place, the rows reach the next command', async () => {
    const result = await ran(
      execa('sh', ['-c', `node "${bin}" export --db "${store}" --out /dev/stdout --json | cat`], {
        reject: false,
        env: { NO_COLOR: '1' },
      }),
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(rows(result.stdout)).toHaveLength(7);
    expect(JSON.parse(result.stderr).outputs[0]).toMatchObject({
      path: '/dev/stdout',
      kind: 'fifo',
      inPlace: true,
    });
  });

  it('--out - is stdout, not a file named -', async () => {
    const cwd = join(dir.path, 'dash');
    mkdirSync(cwd);
    const result = await ran(
      execa('sh', ['-c', `node "${bin}" export --db "${store}" --out - | cat`], { reject: false, cwd }),
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(rows(result.stdout)).toHaveLength(7);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('/dev/stdout redirected to a file: appended through the descriptor, the file never replaced', async () => {
    const out = join(place('redirect'), 'log.jsonl');
    writeFileSync(out, '{"kept":true}\n');
    const before = statSync(out).ino;
    const result = await ran(
      execa('sh', ['-c', `node "${bin}" export --db "${store}" --out /dev/stdout >> "${out}"`], {
        reject: false,
        env: { NO_COLOR: '1' },
      }),
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = rows(readFileSync(out, 'utf8'));
    expect(lines).toHaveLength(8);
    expect(lines[0]).toEqual({ kept: true });
    expect(statSync(out).ino).toBe(before);
  });

  it('/dev/stdout whose reader leaves (| head) ends quietly, as plain stdout does', async () => {
    const result = await ran(
      execa(
        'sh',
        [
          '-c',
          `node "${bin}" export --db "${store}" --unit model-turn --out /dev/stdout | head -c 100 > /dev/null`,
        ],
        {
          reject: false,
          env: { NO_COLOR: '1' },
        },
      ),
    );
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toMatch(/EPIPE|error/);
  });
});

describe('empty outputs and the split', () => {
  it('an export of zero samples still writes its empty file and says 0 samples', async () => {
    const here = place('zero');
    const out = join(here, 'none.jsonl');
    const result = await exported(['--min-turns', '1000', '--out', out]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe('');
    expect(result.stderr).toContain(': 0 sample(s) from 6 session(s)');
    expect(result.stderr).toContain(`written     ${out} (0 B)`);
    // The companion registers the empty file too: LLaMA-Factory finds what the report says was written.
    const sharegpt = await exported([
      '--min-turns',
      '1000',
      '--format',
      'sharegpt',
      '--out',
      join(here, 'none.json'),
    ]);
    expect(sharegpt.exitCode, sharegpt.stderr).toBe(0);
    expect(readdirSync(here).sort()).toEqual(['dataset_info.json', 'none.json', 'none.jsonl']);
  });

  it('--split writes both sides when one is empty, and says which', async () => {
    const here = place('split-empty');
    const out = join(here, 'data.jsonl');
    // Only the 14-turn session has 10 or more: all of its samples are on one side, the other side has none.
    const result = await exported(['--min-turns', '10', '--split', '0.5', '--out', out, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const train = readFileSync(join(here, 'data.train.jsonl'), 'utf8');
    const validation = readFileSync(join(here, 'data.validation.jsonl'), 'utf8');
    const report = JSON.parse(result.stdout);
    expect(report.samples.written).toBeGreaterThan(0);
    const empty = report.samples.train === 0 ? 'train' : 'validation';
    expect(empty === 'train' ? train : validation).toBe('');
    expect(rows(empty === 'train' ? validation : train)).toHaveLength(report.samples.written);
    expect(result.stderr).toContain(`${empty}: 0 samples (empty file written)`);
    expect(result.stderr.match(/0 samples \(empty file written\)/g)).toHaveLength(1);
    expect(report.files).toEqual([join(here, 'data.train.jsonl'), join(here, 'data.validation.jsonl')]);
    expect(readdirSync(here).sort()).toEqual(['data.train.jsonl', 'data.validation.jsonl']);
  });

  it('--split to a device or a FIFO is refused with exit 2 before anything is opened', async () => {
    const fifo = join(place('split-fifo'), 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const out of ['/dev/null', fifo, '/dev/stdout']) {
      // No reader is started: refusing must not wait on the FIFO's open.
      const result = await exported(['--split', '0.9', '--out', out]);
      expect(result.exitCode, out).toBe(2);
      expect(result.stderr).toContain(`--split cannot write beside ${out}`);
      expect(result.stderr.trim().split('\n')[0]).toMatch(/^error: /);
    }
    expect(readdirSync(join(dir.path, 'split-fifo'))).toEqual(['fifo']);
    expect(existsSync('/dev/null.train.jsonl') || existsSync('/dev/null.train')).toBe(false);
  });
});
