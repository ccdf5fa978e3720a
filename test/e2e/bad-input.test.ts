import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PathSummary } from '../../src/sources/ingest.js';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { runUnprivileged } from '../helpers/unprivileged.js';

const fixture = (name: string) => join(root, 'test', 'fixtures', 'claude-code', name);
const lines = (name: string) => readFileSync(fixture(name), 'utf8').trimEnd().split('\n');

let dir: ReturnType<typeof tempDir>;
let db: string;
beforeEach(() => {
  dir = tempDir();
  db = join(dir.path, 'store', 'replay.db');
});
afterEach(() => dir.remove());

const ingestJson = async (...paths: string[]) => {
  const result = await run(['ingest', ...paths, '--db', db, '--json']);
  return { result, report: JSON.parse(result.stdout) as { paths: PathSummary[] } };
};
const count = (sql: string) => {
  const handle = new Database(db, { readonly: true });
  try {
    return handle.prepare(sql).pluck().get() as number;
  } finally {
    handle.close();
  }
};

describe('ingest on bad input', () => {
  it('reports a corrupt line in the middle with file:line and ingests the rest', async () => {
    const file = join(dir.path, 'corrupt.jsonl');
    const body = lines('split-response.jsonl');
    body.splice(2, 0, '{"type":"assistant","uuid":"broken", "message": {');
    writeFileSync(file, `${body.join('\n')}\n`);
    const { result, report } = await ingestJson(file);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`warning: ${file}:3: not valid JSON`);
    expect(report.paths[0]?.skippedLines).toBe(1);
    expect(count('SELECT turn_count FROM sessions')).toBe(2);
  });

  it('leaves a torn last line (a session still being written) for the next ingest', async () => {
    const file = join(dir.path, 'live.jsonl');
    const body = lines('split-response.jsonl');
    const last = body.pop() as string;
    writeFileSync(file, `${body.join('\n')}\n${last.slice(0, 30)}`);
    const first = await run(['ingest', file, '--db', db]);
    expect(first.exitCode).toBe(0);
    expect(first.stderr).toContain(`${file}:6: last line is incomplete (still being written?); not read yet`);
    expect(count('SELECT turn_count FROM sessions')).toBe(1);
    writeFileSync(file, `${body.join('\n')}\n${last}\n`);
    const second = await run(['ingest', file, '--db', db]);
    expect(second.stderr).toBe('');
    expect(second.stdout).toContain('sessions 0 new, 1 updated');
    expect(count('SELECT turn_count FROM sessions')).toBe(2);
  });

  it('replaces a non-UTF-8 byte, says where, and keeps the line', async () => {
    const file = join(dir.path, 'latin1.jsonl');
    const body = lines('file-order.jsonl');
    const bad = Buffer.from(body[0] as string)
      .toString('latin1')
      .replace('second', 'sec\u00e9nd');
    writeFileSync(
      file,
      Buffer.concat([Buffer.from(bad, 'latin1'), Buffer.from(`\n${body.slice(1).join('\n')}\n`)]),
    );
    const result = await run(['ingest', file, '--db', db]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`${file}:1: invalid UTF-8 replaced with U+FFFD`);
    const show = await run(['show', '11111111', '--db', db]);
    expect(show.stdout).toContain('sec\uFFFDnd');
  });

  it('ingests a 50 MB single line', async () => {
    const file = join(dir.path, 'huge.jsonl');
    const body = lines('split-response.jsonl');
    const huge = JSON.parse(body[4] as string);
    huge.message.content[0].content = 'x'.repeat(50 * 1024 * 1024);
    writeFileSync(file, `${[...body.slice(0, 4), JSON.stringify(huge), body[5]].join('\n')}\n`);
    const result = await run(['ingest', file, '--db', db]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    expect(count("SELECT max(length(parts)) FROM messages WHERE role = 'tool'")).toBeGreaterThan(
      50 * 1024 * 1024,
    );
  });

  it('says an empty file has nothing in it and exits 0', async () => {
    const file = join(dir.path, 'empty.jsonl');
    writeFileSync(file, '');
    const result = await run(['ingest', file, '--db', db]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`note: ${file}: empty file, nothing to ingest`);
  });

  it('says a pipe or a device given as a path is not a log file, ingests the others, and exits 2', async () => {
    // What `ingest <(ssh host cat session.jsonl)` passes: a FIFO. Its bytes can be read once only, and its name is
    // not the log's; before, it was taken for an empty file (exit 0, nothing said) — or would block on a read.
    const fifo = join(dir.path, 'pipe.jsonl');
    execFileSync('mkfifo', [fifo]);
    const result = await run(['ingest', fifo, '/dev/null', fixture('rewind.jsonl'), '--db', db]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${fifo}: not a regular file (a pipe or FIFO)`);
    expect(result.stderr).toContain('/dev/null: not a regular file (a character device)');
    expect(result.stderr).not.toContain('empty file');
    expect(count("SELECT count(*) FROM sessions WHERE kind != 'branch'")).toBe(1);
  });

  it('names a path that does not exist, ingests the others, and exits 2', async () => {
    const missing = join(dir.path, 'nope');
    const result = await run(['ingest', missing, fixture('rewind.jsonl'), '--db', db]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`error: ${missing}: no such file or directory`);
    // rewind.jsonl holds one session (its abandoned branch is stored as a session of kind branch too).
    expect(count("SELECT count(*) FROM sessions WHERE kind != 'branch'")).toBe(1);
  });

  it('follows a symbolic link loop once, says so, and ingests what is there', async () => {
    const tree = join(dir.path, 'tree');
    mkdirSync(join(tree, 'project'), { recursive: true });
    copyFileSync(fixture('rewind.jsonl'), join(tree, 'project', 's.jsonl'));
    symlinkSync(tree, join(tree, 'project', 'loop'));
    const result = await run(['ingest', tree, '--db', db]);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`${join(tree, 'project', 'loop')}: symbolic link loop`);
    // rewind.jsonl holds one session (its abandoned branch is stored as a session of kind branch too).
    expect(count("SELECT count(*) FROM sessions WHERE kind != 'branch'")).toBe(1);
  });

  it('reports unreadable files and directories, ingests the rest, and exits 2', async () => {
    const tree = join(dir.path, 'tree');
    mkdirSync(join(tree, 'locked-dir'), { recursive: true });
    copyFileSync(fixture('rewind.jsonl'), join(tree, 'ok.jsonl'));
    copyFileSync(fixture('file-order.jsonl'), join(tree, 'locked.jsonl'));
    copyFileSync(fixture('compaction.jsonl'), join(tree, 'locked-dir', 'c.jsonl'));
    chmodSync(join(tree, 'locked.jsonl'), 0o000);
    chmodSync(join(tree, 'locked-dir'), 0o000);
    chmodSync(dir.path, 0o777);
    mkdirSync(join(dir.path, 'store'), { mode: 0o777 });
    chmodSync(join(dir.path, 'store'), 0o777);
    const result = await runUnprivileged(['ingest', tree, '--db', db], dir.path);
    expect(result.stderr).toContain(`${join(tree, 'locked.jsonl')}: permission denied`);
    expect(result.stderr).toContain(`${join(tree, 'locked-dir')}: permission denied`);
    expect(result.exitCode).toBe(2);
    // rewind.jsonl holds one session (its abandoned branch is stored as a session of kind branch too).
    expect(count("SELECT count(*) FROM sessions WHERE kind != 'branch'")).toBe(1);
  });

  it('leaves the store consistent when killed mid-ingest (SIGKILL), file by file', async () => {
    // Many sizeable files: a kill at any moment lands inside some file's parse or write.
    const tree = join(dir.path, 'tree');
    mkdirSync(tree);
    const body = lines('split-response.jsonl');
    const big = JSON.parse(body[4] as string);
    big.message.content[0].content = 'y'.repeat(2 * 1024 * 1024);
    for (let i = 0; i < 40; i++) {
      const sid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      // Distinct uuids too: files sharing them would be one history stored once (a resumed session).
      const text = [...body.slice(0, 4), JSON.stringify(big), body[5]]
        .map((line) => {
          const entry = JSON.parse(line as string);
          entry.sessionId = sid;
          entry.uuid = `${i}-${entry.uuid}`;
          if (entry.parentUuid) entry.parentUuid = `${i}-${entry.parentUuid}`;
          return JSON.stringify(entry);
        })
        .join('\n');
      writeFileSync(join(tree, `${sid}.jsonl`), `${text}\n`);
    }
    for (const delay of [150, 350, 700]) {
      const child = execa(process.execPath, [bin, 'ingest', tree, '--db', db], { reject: false });
      await new Promise((resolve) => setTimeout(resolve, delay));
      child.kill('SIGKILL');
      await child;
      if (!existsSync(db)) continue; // killed before it opened the store: nothing written, nothing to check
      const handle = new Database(db, { readonly: true });
      expect(handle.pragma('integrity_check', { simple: true })).toBe('ok');
      // Killed while the store was being created: its first migration did not commit, so it holds nothing.
      const tables = handle.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      if (!tables.includes('source_files')) {
        expect(tables.filter((name) => name !== 'migrations')).toEqual([]);
        handle.close();
        continue;
      }
      // Every file is either wholly in the store (its record and all its messages) or not at all.
      const files = handle.prepare('SELECT count(*) FROM source_files').pluck().get() as number;
      const sessions = handle.prepare('SELECT count(*) FROM sessions').pluck().get() as number;
      const messages = handle.prepare('SELECT count(*) FROM messages').pluck().get() as number;
      handle.close();
      expect(sessions).toBe(files);
      expect(messages).toBe(files * 4);
    }
    const finish = await run(['ingest', tree, '--db', db, '--json']);
    expect(finish.exitCode).toBe(0);
    expect(count('SELECT count(*) FROM sessions')).toBe(40);
    expect(count('SELECT count(*) FROM messages')).toBe(160);
  });
});
