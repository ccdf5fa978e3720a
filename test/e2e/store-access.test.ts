// A store the user can read but not write (a file of mode 0444, a directory they cannot write, a read-only
// mount) is read by the commands that only read, and refused plainly by the two that write. A damaged store
// and a store directory that cannot be created are said with the path, exit 2.

import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../src/sources/ingest.js';
import { openDb } from '../../src/store/db.js';
import { type Ran, root, run, tempDir } from '../helpers/cli.js';
import { isRoot, runUnprivileged } from '../helpers/unprivileged.js';

const nobody = 65534;

let dir: ReturnType<typeof tempDir>;
let original: string;
let runId: string;
/** What each read-only command prints on the original store, read by its owner with write access. */
const expected = new Map<string, Ran>();

/** The read-only commands, each with the data it must print. */
const reads: { name: string; args: string[]; check: (stdout: string) => void }[] = [
  {
    name: 'sessions',
    args: ['sessions', '--json'],
    check: (stdout) => {
      const sessions = JSON.parse(stdout) as { sourceId: string }[];
      expect(sessions).toHaveLength(6);
      expect(sessions.map((s) => s.sourceId)).toContain('9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d');
    },
  },
  {
    name: 'show',
    args: ['show', '9a8b7c6d'],
    check: (stdout) => {
      expect(stdout).toContain('── user (injected, compaction summary)');
      expect(stdout).toContain('→ Bash({"command":"npm test"}) [no result recorded]');
    },
  },
  {
    name: 'runs',
    args: ['runs', '--json'],
    check: (stdout) => {
      const runs = JSON.parse(stdout) as { id: string; model: string; turnsDone: number }[];
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ id: runId, model: 'recorded', turnsDone: 30 });
    },
  },
  {
    name: 'export',
    args: ['export', '--format', 'openai'],
    check: (stdout) => {
      const rows = stdout.trimEnd().split('\n');
      expect(rows).toHaveLength(7);
      expect(JSON.parse(rows[0] as string).messages.length).toBeGreaterThan(1);
    },
  },
  {
    name: 'stats',
    args: ['stats', '--elision', '--json'],
    check: (stdout) => {
      const stats = JSON.parse(stdout) as { sessions: number };
      expect(stats.sessions).toBe(6);
    },
  },
];

/** The commands that write, each refused on a store its user cannot write. */
const writes = (store: string): string[][] => [
  ['ingest', 'sample-sessions', '--db', store],
  ['replay', 'sample-sessions', '--db', store, '--out', join(dir.path, 'pairs-refused.jsonl')],
];

const listing = (folder: string) => readdirSync(folder).sort();

/** A copy of the original store in a folder of its own, owned by root with the given modes. */
function copyStore(name: string, folderMode: number, fileMode: number): { folder: string; store: string } {
  const folder = join(dir.path, name);
  mkdirSync(folder);
  const store = join(folder, 'replay.db');
  copyFileSync(original, store);
  chmodSync(store, fileMode);
  chmodSync(folder, folderMode);
  return { folder, store };
}

beforeAll(async () => {
  dir = tempDir('replay-store-access-');
  // nobody must be able to reach the stores (mkdtemp makes the folder 0700).
  chmodSync(dir.path, 0o755);
  original = join(dir.path, 'made', 'replay.db');
  expect((await run(['ingest', 'sample-sessions', '--db', original])).exitCode).toBe(0);
  const replayed = await run([
    'replay',
    'sample-sessions',
    '--db',
    original,
    '--out',
    join(dir.path, 'pairs.jsonl'),
    '--force',
    '--json',
  ]);
  expect(replayed.exitCode).toBe(0);
  runId = (JSON.parse(replayed.stdout) as { id: string }).id;
  for (const read of reads) {
    const result = await run([...read.args, '--db', original]);
    expect(result.exitCode).toBe(0);
    read.check(result.stdout);
    expected.set(read.name, result);
  }
});

let mounted: string | undefined;
afterAll(() => {
  if (mounted) execFileSync('umount', [mounted]);
  if (dir) {
    // Modes set below would stop the cleanup of a test run as another user.
    for (const name of ['file-0444', 'folder-0755', 'writer']) {
      try {
        chmodSync(join(dir.path, name), 0o755);
      } catch {}
    }
    dir.remove();
  }
});

/** Every read command prints what it printed on the original store; both writers are refused; nothing changes. */
async function readsButNoWrites(
  folder: string,
  store: string,
  as: (args: string[]) => Promise<Ran>,
  why: RegExp,
): Promise<void> {
  const before = readFileSync(store);
  const files = listing(folder);
  // All at once, as several users of a shared store would.
  const [readResults, writeResults] = await Promise.all([
    Promise.all(reads.map((read) => as([...read.args, '--db', store]))),
    Promise.all(writes(store).map((args) => as(args))),
  ]);
  reads.forEach((read, index) => {
    const result = readResults[index] as Ran;
    expect({ command: read.name, exit: result.exitCode, stderr: result.stderr }).toMatchObject({
      exit: 0,
      stderr: expected.get(read.name)?.stderr.replaceAll(original, store),
    });
    read.check(result.stdout);
    expect(result.stdout).toBe(expected.get(read.name)?.stdout.replaceAll(original, store));
  });
  writes(store).forEach((args, index) => {
    const result = writeResults[index] as Ran;
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`error: ${args[0]} needs write access to the store ${store}: `);
    expect(result.stderr).toMatch(why);
    expect(result.stderr).toContain(
      'hint: run it as a user who can write the store, or use a store of your own',
    );
    expect(result.stderr).not.toContain('    at ');
  });
  // Not a byte of the store changed, and no -wal or -shm of the reader's was left beside it.
  expect(readFileSync(store).equals(before)).toBe(true);
  expect(listing(folder)).toEqual(files);
}

// Each test spawns the binary a dozen times; on a busy machine that takes a while.
const slow = { timeout: 240_000 };

describe('a store the user can read but not write', slow, () => {
  it('store file of mode 0444 in a folder the user may write: read, not written, nothing left beside it', async () => {
    const { folder, store } = copyStore('file-0444', 0o755, 0o444);
    // The folder is the reader's, as a shared folder would let them write in it: only the file's mode says no.
    if (isRoot) chownSync(folder, nobody, nobody);
    else chmodSync(folder, 0o755);
    await readsButNoWrites(
      folder,
      store,
      (args) => runUnprivileged(args, dir.path),
      /the file is read-only for you \(mode 0444/,
    );
  });

  it('store in a folder the user cannot write (root made it: folder 0755, file 0644)', async () => {
    const { folder, store } = copyStore('folder-0755', isRoot ? 0o755 : 0o555, isRoot ? 0o644 : 0o444);
    await readsButNoWrites(
      folder,
      store,
      (args) => runUnprivileged(args, dir.path),
      isRoot ? /the file is read-only for you \(mode 0644, owner uid 0\)/ : /read-only for you/,
    );
  });

  it('store on a read-only bind mount, read by root itself', async (context) => {
    const source = join(dir.path, 'mount-source');
    mkdirSync(source);
    copyFileSync(original, join(source, 'replay.db'));
    const target = join(dir.path, 'mounted');
    mkdirSync(target);
    try {
      execFileSync('mount', ['--bind', source, target], { stdio: 'ignore' });
      mounted = target;
      execFileSync('mount', ['-o', 'remount,bind,ro', target], { stdio: 'ignore' });
    } catch {
      context.skip('cannot make a read-only bind mount here (needs root with CAP_SYS_ADMIN)');
    }
    await readsButNoWrites(
      target,
      join(target, 'replay.db'),
      (args) => run(args),
      /it is on a read-only file system/,
    );
  });

  it('with a writer active, reads its writes that are still only in the -wal; refuses a -wal it cannot read', async () => {
    const { folder, store } = copyStore('writer', 0o755, 0o644);
    if (!isRoot) chmodSync(folder, 0o555);
    // The owner's ingest, still open: the new session is committed to the -wal, not yet to the store file.
    const writer = openDb(store);
    ingest(writer, [join(root, 'test', 'fixtures', 'claude-code', 'rewind.jsonl')]);
    expect(statSync(`${store}-wal`).size).toBeGreaterThan(0);
    const during = await runUnprivileged(['sessions', '--json', '--db', store], dir.path);
    expect(during.stderr).toBe('');
    expect(during.exitCode).toBe(0);
    // The 6 sample sessions, and rewind.jsonl's session with its abandoned branch (a session of its own).
    expect(JSON.parse(during.stdout)).toHaveLength(8);
    writer.close();
    expect(listing(folder)).toEqual(['replay.db']);
    // A -wal with writes left without its -shm (a crashed writer): it cannot be read without creating one.
    writeFileSync(`${store}-wal`, 'frames');
    const stranded = await runUnprivileged(['sessions', '--db', store], dir.path);
    expect(stranded.exitCode).toBe(2);
    expect(stranded.stderr).toContain(
      `error: cannot read the store ${store}: replay.db-wal beside it holds writes not yet in the store file`,
    );
    expect(stranded.stderr).toContain("hint: have the store's owner run replay-history ingest once");
    // An empty one holds nothing: the store file is whole and is read.
    writeFileSync(`${store}-wal`, '');
    const empty = await runUnprivileged(['sessions', '--json', '--db', store], dir.path);
    expect(empty.exitCode).toBe(0);
    expect(JSON.parse(empty.stdout)).toHaveLength(8);
    expect(listing(folder)).toEqual(['replay.db', 'replay.db-wal']);
  });

  it('a store of an older version that the user cannot write: says it must be upgraded by someone who can', async () => {
    const { folder, store } = copyStore('older', 0o755, 0o644);
    chmodSync(store, 0o644);
    const raw = new Database(store);
    const last = raw.prepare('SELECT name FROM migrations ORDER BY id DESC LIMIT 1').pluck().get() as string;
    raw.prepare('DELETE FROM migrations WHERE name = ?').run(last);
    raw.close();
    chmodSync(store, isRoot ? 0o644 : 0o444);
    const before = readFileSync(store);
    const result = await runUnprivileged(['sessions', '--db', store], dir.path);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      `error: the store ${store} was made by an older replay-history and must be upgraded (${last}) before it can be read, which needs write access`,
    );
    expect(result.stderr).toContain(
      `hint: run replay-history ingest once as a user who can write it, or read a copy: cp ${store} FILE`,
    );
    expect(readFileSync(store).equals(before)).toBe(true);
    expect(listing(folder)).toEqual(['replay.db']);
  });
});

describe('a store the user cannot read', () => {
  it('is said with its mode and owner, exit 2', async () => {
    const { store } = copyStore('unreadable', 0o755, 0o000);
    const result = await runUnprivileged(['sessions', '--db', store], dir.path);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^error: cannot read the store ${store}: permission denied \\(mode 0000, owner uid \\d+\\)\nhint: ask the store's owner for read access`,
      ),
    );
  });
});

describe('a store that is not there', slow, () => {
  it('is not created by a command that only reads: it says there is none yet and how to make one', async () => {
    const store = join(dir.path, 'none', 'replay.db');
    const commands = [['sessions'], ['show', '9a8b7c6d'], ['runs'], ['export'], ['stats', '--elision']];
    const results = await Promise.all(commands.map((args) => run([...args, '--db', store])));
    for (const result of results) {
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toBe(
        `error: there is no store at ${store} yet\nhint: create it by ingesting logs: replay-history ingest --db ${store} [paths] (with no path, every agent's own log directory)`,
      );
    }
    expect(readdirSync(dir.path)).not.toContain('none');
  });

  it('whose default folder cannot be created gives the path and exit 2, not a raw EACCES', async () => {
    // Under a regular file: ENOTDIR whoever runs it.
    const file = join(dir.path, 'plain-file');
    writeFileSync(file, 'x');
    const underFile = await run(['ingest', 'sample-sessions'], {
      env: { XDG_DATA_HOME: join(file, 'data'), REPLAY_HISTORY_DB: '' },
    });
    expect(underFile.exitCode).toBe(2);
    expect(underFile.stderr).toContain(
      `error: cannot create the store directory ${join(file, 'data', 'replay-history')}: a part of the path is a file, not a directory`,
    );
    expect(underFile.stderr).toContain('hint: pass a store file in a directory you can write with --db FILE');
    // A home the user cannot write (root's folder, 0755): permission denied.
    const home = join(dir.path, 'locked-home');
    mkdirSync(home, { mode: isRoot ? 0o755 : 0o555 });
    chmodSync(home, isRoot ? 0o755 : 0o555);
    const locked = await runUnprivileged(['ingest', 'sample-sessions'], dir.path, {
      HOME: home,
      XDG_DATA_HOME: '',
      REPLAY_HISTORY_DB: '',
    });
    expect(locked.exitCode).toBe(2);
    expect(locked.stderr).toContain(
      `error: cannot create the store directory ${join(home, '.local', 'share', 'replay-history')}: permission denied`,
    );
    expect(locked.stderr).not.toContain('EACCES');
  });
});

describe('a damaged store', slow, () => {
  /** Garbage over the pages of the data tables, in the middle of the file; the schema pages stay whole. */
  function damagedStore(): string {
    const store = join(dir.path, 'damaged', 'replay.db');
    mkdirSync(join(dir.path, 'damaged'), { recursive: true });
    copyFileSync(original, store);
    const raw = new Database(store, { readonly: true });
    const pages = raw
      .prepare(
        "SELECT pageno FROM dbstat WHERE name IN ('sessions', 'messages', 'runs', 'source_files', 'sqlite_autoindex_source_files_1')",
      )
      .pluck()
      .all() as number[];
    const size = raw.pragma('page_size', { simple: true }) as number;
    raw.close();
    const fd = openSync(store, 'r+');
    for (const page of pages) writeSync(fd, Buffer.alloc(size, 0xa5), 0, size, (page - 1) * size);
    return store;
  }

  const all = (store: string) => [...reads.map((read) => [...read.args, '--db', store]), ...writes(store)];

  it('is said with the file and what to do, for every command, also when met in the middle of a query', async () => {
    const store = damagedStore();
    const commands = all(store);
    const results = await Promise.all(commands.map((args) => run(args)));
    commands.forEach((args, index) => {
      const result = results[index] as Ran;
      expect({ args, exit: result.exitCode }).toEqual({ args, exit: 2 });
      expect(result.stderr).toBe(
        `error: the store ${store} is damaged (database disk image is malformed)\nhint: the agents' logs are the source: move it aside (mv ${store} ${store}.damaged) and run replay-history ingest again (replay runs stored in it are not rebuilt)`,
      );
    });
    // The listing had begun: the damage came out of the query, after the store was opened.
    const listed = await run(['sessions', '--json', '--db', store]);
    expect(listed.stdout).toBe('[');
  });

  it('that is not a database at all is said with the file', async () => {
    const store = join(dir.path, 'text', 'replay.db');
    mkdirSync(join(dir.path, 'text'));
    writeFileSync(store, 'my notes, saved over the store by mistake\n'.repeat(100));
    const some = all(store).filter((args) =>
      ['sessions', 'show', 'export', 'ingest', 'replay'].includes(args[0] as string),
    );
    const results = await Promise.all(some.map((args) => run(args)));
    some.forEach((args, index) => {
      const result = results[index] as Ran;
      expect({ args, exit: result.exitCode }).toEqual({ args, exit: 2 });
      expect(result.stderr).toContain(
        `error: the store ${store} is not an SQLite database (file is not a database)`,
      );
      expect(result.stderr).toContain(
        `hint: the agents' logs are the source: move it aside (mv ${store} ${store}.damaged)`,
      );
    });
    expect(readFileSync(store, 'utf8')).toMatch(/^my notes/);
  });
});
