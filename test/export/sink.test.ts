// The Sink on every kind of thing an `--out` path can be, all real: regular files, links, a FIFO, devices, a
// socket, a directory. Renaming a temporary over anything but a regular file replaces it with a plain file (a
// device node, a pipe its reader waits on, the link instead of its target), so each kind is checked for what it is
// afterwards as well as for what it received.
import { execFileSync } from 'node:child_process';
import {
  createReadStream,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  removeTemporaries,
  Sink,
  SinkError,
  sharesStdout,
  targetOf,
  writeWhole,
} from '../../src/export/sink.js';
import { tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('replay-sink-');
});
afterEach(() => dir.remove());

const temporaries = (path: string) => readdirSync(path).filter((name) => name.endsWith('.tmp'));

async function rejection(promise: Promise<unknown>): Promise<SinkError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SinkError);
  return error as SinkError;
}

describe('a path that does not exist yet, or a regular file', () => {
  it('is written under a temporary name and appears whole only on close', async () => {
    const out = join(dir.path, 'new.jsonl');
    expect(targetOf(out)).toMatchObject({ kind: 'new', atomic: true, writesTo: out });
    const sink = await Sink.open(out);
    await sink.write('{"a":1}');
    await sink.write('{"a":2}');
    expect(lstatSync(out, { throwIfNoEntry: false })).toBeUndefined();
    expect(temporaries(dir.path)).toHaveLength(1);
    await sink.close();
    expect(readFileSync(out, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    expect(temporaries(dir.path)).toEqual([]);
    expect(sink).toMatchObject({ rows: 2, bytes: 16 });
  });

  it('replaces a regular file by rename (a new inode), keeping its permissions', async () => {
    const out = join(dir.path, 'data.jsonl');
    writeFileSync(out, 'old\n', { mode: 0o600 });
    const before = statSync(out);
    expect(targetOf(out)).toMatchObject({ kind: 'file', atomic: true });
    const sink = await Sink.open(out);
    await sink.write('new');
    expect(readFileSync(out, 'utf8')).toBe('old\n');
    await sink.close();
    const after = statSync(out);
    expect(readFileSync(out, 'utf8')).toBe('new\n');
    expect(after.ino).not.toBe(before.ino);
    expect(after.mode & 0o777).toBe(0o600);
  });

  it('abandoned, leaves the file as it was and no temporary', async () => {
    const out = join(dir.path, 'data.jsonl');
    writeFileSync(out, 'old\n');
    const sink = await Sink.open(out);
    await sink.write('half');
    sink.abandon();
    expect(readFileSync(out, 'utf8')).toBe('old\n');
    expect(temporaries(dir.path)).toEqual([]);
  });

  it('removes what a killed writer of the same file left beside it, and nothing that may still be written', async () => {
    const out = join(dir.path, 'data.jsonl');
    const hourAgo = new Date(Date.now() - 3_600_000);
    const made = (name: string, old: boolean) => {
      writeFileSync(join(dir.path, name), 'half a dataset');
      if (old) utimesSync(join(dir.path, name), hourAgo, hourAgo);
      return name;
    };
    // pid 99999999 is beyond any pid_max: no such process
    const stale = made('data.jsonl.99999999-0123abcd.tmp', true);
    const fresh = made('data.jsonl.99999999-89abcdef.tmp', false); // changing: a writer elsewhere may own it
    const live = made(`data.jsonl.${process.pid}-deadbeef.tmp`, true); // its process runs
    const other = made('other.jsonl.99999999-0123abcd.tmp', true); // another file's
    const mine = made('data.jsonl.99999999-nothex00.tmp', true); // not our name
    const sink = await Sink.open(out);
    await sink.write('{"a":1}');
    await sink.close();
    expect(temporaries(dir.path).sort()).toEqual([fresh, live, other, mine].sort());
    expect(temporaries(dir.path)).not.toContain(stale);
  });

  it('stopped by a signal, removeTemporaries leaves every file as it was and no temporary', async () => {
    const out = join(dir.path, 'data.jsonl');
    writeFileSync(out, 'old\n');
    const first = await Sink.open(out);
    const second = await Sink.open(join(dir.path, 'validation.jsonl'));
    await first.write('half');
    await second.write('half');
    expect(temporaries(dir.path)).toHaveLength(2);
    expect(removeTemporaries().sort()).toEqual([out, join(dir.path, 'validation.jsonl')].sort());
    expect(temporaries(dir.path)).toEqual([]);
    expect(readFileSync(out, 'utf8')).toBe('old\n');
    expect(removeTemporaries()).toEqual([]);
    first.abandon();
    second.abandon();
  });

  it('an empty export is an empty file', async () => {
    const out = join(dir.path, 'empty.jsonl');
    await (await Sink.open(out)).close();
    expect(readFileSync(out, 'utf8')).toBe('');
  });
});

describe('a symbolic link', () => {
  it('stays a link: its final target is replaced, beside the target, through a chain of relative links', async () => {
    mkdirSync(join(dir.path, 'data'));
    mkdirSync(join(dir.path, 'links'));
    const real = join(dir.path, 'data', 'real.jsonl');
    writeFileSync(real, 'old\n');
    symlinkSync('../data/real.jsonl', join(dir.path, 'links', 'middle'));
    const out = join(dir.path, 'links', 'out.jsonl');
    symlinkSync('middle', out);
    expect(targetOf(out)).toMatchObject({ kind: 'link', atomic: true, writesTo: real });
    const sink = await Sink.open(out);
    await sink.write('row');
    // The temporary is beside the target, so the rename stays on one file system and lands on the target.
    expect(temporaries(join(dir.path, 'data'))).toHaveLength(1);
    await sink.close();
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir.path, 'links', 'middle')).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe('row\n');
    expect(temporaries(join(dir.path, 'data'))).toEqual([]);
  });

  it('dangling, creates its target as a shell redirect would', async () => {
    const out = join(dir.path, 'link.jsonl');
    symlinkSync('made.jsonl', out);
    const sink = await Sink.open(out);
    await sink.write('row');
    await sink.close();
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir.path, 'made.jsonl'), 'utf8')).toBe('row\n');
  });

  it('in a loop is refused with ELOOP', async () => {
    symlinkSync('b', join(dir.path, 'a'));
    symlinkSync('a', join(dir.path, 'b'));
    const error = await rejection(Sink.open(join(dir.path, 'a')));
    expect(error.code).toBe('ELOOP');
    expect(error.message).toContain('too many levels of symbolic links');
  });

  it('to a device is written in place, the device untouched', async () => {
    const out = join(dir.path, 'null');
    symlinkSync('/dev/null', out);
    expect(targetOf(out)).toMatchObject({ kind: 'character device', atomic: false, writesTo: '/dev/null' });
    const sink = await Sink.open(out);
    await sink.write('row');
    await sink.close();
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });
});

describe('things written in place', () => {
  it('a FIFO: its reader gets every row, and it stays a FIFO', async () => {
    const fifo = join(dir.path, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(targetOf(fifo)).toMatchObject({ kind: 'fifo', atomic: false, descriptor: false });
    expect(sharesStdout(targetOf(fifo))).toBe(false);
    // The reader's open and the sink's open each wait for the other, as with any FIFO.
    const read = text(createReadStream(fifo));
    const sink = await Sink.open(fifo);
    for (let n = 0; n < 1000; n++) await sink.write(`{"n":${n}}`);
    await sink.close();
    const lines = (await read).trimEnd().split('\n');
    expect(lines).toHaveLength(1000);
    expect(lines.at(-1)).toBe('{"n":999}');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(temporaries(dir.path)).toEqual([]);
  });

  it('/dev/full: ENOSPC said with the path, and /dev/full is still a character device', async () => {
    const before = statSync('/dev/full');
    expect(targetOf('/dev/full')).toMatchObject({ kind: 'character device', atomic: false });
    const sink = await Sink.open('/dev/full');
    const error = await rejection(
      (async () => {
        for (let n = 0; n < 100; n++) await sink.write('{"row":"some bytes"}');
        await sink.close();
      })(),
    );
    expect(error.code).toBe('ENOSPC');
    expect(error.message).toBe('cannot write /dev/full: no space left on the device (ENOSPC)');
    expect(error.hint).toContain('written in place');
    const after = lstatSync('/dev/full');
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe(before.rdev);
  });

  it('/dev/stdout and /dev/fd/1 are descriptors, never followed to a name to rename onto', () => {
    for (const path of ['/dev/stdout', '/dev/fd/1']) {
      const target = targetOf(path);
      expect(target, path).toMatchObject({ path, writesTo: path, atomic: false, descriptor: true });
      expect(sharesStdout(target), path).toBe(true);
    }
  });

  it('a socket: refused plainly (it cannot be opened as a file), left a socket', async () => {
    const path = join(dir.path, 'socket');
    const server: Server = createServer();
    await new Promise<void>((listening) => server.listen(path, listening));
    try {
      expect(targetOf(path)).toMatchObject({ kind: 'socket', atomic: false });
      const error = await rejection(Sink.open(path));
      expect(error.code).toBe('ENXIO');
      expect(error.message).toContain('it is a socket');
      expect(error.hint).toBe('nothing was written to it');
      expect(lstatSync(path).isSocket()).toBe(true);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});

describe('paths that cannot be written', () => {
  it('a directory: EISDIR before anything is opened', () => {
    expect(() => targetOf(dir.path)).toThrow(/it is a directory \(EISDIR\)/);
    symlinkSync(dir.path, join(dir.path, 'to-dir'));
    expect(() => targetOf(join(dir.path, 'to-dir'))).toThrow(/it is a directory/);
  });

  it('a missing directory: ENOENT said as such, nothing created', async () => {
    const error = await rejection(Sink.open(join(dir.path, 'nowhere', 'data.jsonl')));
    expect(error.message).toContain('its directory does not exist (ENOENT)');
    expect(error.hint).toBe('nothing was written under that name');
    expect(readdirSync(dir.path)).toEqual([]);
  });

  it('a path through a regular file: ENOTDIR', () => {
    writeFileSync(join(dir.path, 'file'), '');
    expect(() => targetOf(join(dir.path, 'file', 'data.jsonl'))).toThrow(/not a directory \(ENOTDIR\)/);
  });
});

describe('writeWhole', () => {
  it('writes a companion through a link as the rows are written: the link stays a link', async () => {
    writeFileSync(join(dir.path, 'kept.json'), '{}\n');
    symlinkSync('kept.json', join(dir.path, 'dataset_info.json'));
    await writeWhole(join(dir.path, 'dataset_info.json'), '{"a":1}\n');
    expect(lstatSync(join(dir.path, 'dataset_info.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir.path, 'kept.json'), 'utf8')).toBe('{"a":1}\n');
  });
});
