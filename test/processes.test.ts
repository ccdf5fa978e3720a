import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alive, leftByGone, ownerState, parseOwner, thisProcess } from '../src/processes.js';

// A replay run keeps the process running it (src/processes.ts); `runs` shows a run whose process is gone as
// interrupted, and a resume refuses a run whose process is still there.

/** The pid of a process that has ended (a child run to its end). */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  expect(child.status).toBe(0);
  return child.pid as number;
}

describe('ownerState', () => {
  it('is alive for this process, with when it started where the kernel says it', () => {
    const me = thisProcess();
    expect(me.pid).toBe(process.pid);
    expect(me.host).toBe(hostname());
    if (existsSync('/proc/self/stat')) expect(me.since).toMatch(/^[\w-]+:\d+$/);
    expect(ownerState(me)).toBe('alive');
    expect(alive(process.pid)).toBe(true);
  });

  it('is gone for a process that ended', () => {
    const pid = endedPid();
    expect(alive(pid)).toBe(false);
    expect(ownerState({ pid, host: hostname() })).toBe('gone');
  });

  it('is gone for a pid another process has now: the start it was stored with is not that one', () => {
    if (!existsSync('/proc/self/stat')) return;
    const me = thisProcess();
    expect(ownerState({ ...me, since: `${me.since}0` })).toBe('gone');
  });

  it('is elsewhere for another machine and unknown with no owner (runs made before it was kept)', () => {
    expect(ownerState({ pid: process.pid, host: `${hostname()}-elsewhere` })).toBe('elsewhere');
    expect(ownerState(undefined)).toBe('unknown');
  });
});

describe('parseOwner', () => {
  it('reads what the store keeps, and nothing from what is not an owner', () => {
    const me = thisProcess();
    expect(parseOwner(JSON.stringify(me))).toEqual(me);
    expect(parseOwner(null)).toBeUndefined();
    expect(parseOwner('')).toBeUndefined();
    expect(parseOwner('{"pid":"12"}')).toBeUndefined();
    expect(parseOwner('not json')).toBeUndefined();
  });
});

describe('leftByGone', () => {
  it('names what processes no longer running left, by the pid its pattern finds, and nothing else', () => {
    const folder = mkdtempSync(join(tmpdir(), 'rh-left-'));
    try {
      const gone = endedPid();
      for (const name of [`out.${gone}-0123abcd.tmp`, `out.${process.pid}-0123abcd.tmp`, 'out.tmp', 'other'])
        writeFileSync(join(folder, name), '');
      mkdirSync(join(folder, `view-${gone}-x`));
      expect(leftByGone(folder, /^out\.(\d+)-[0-9a-f]{8}\.tmp$/)).toEqual([`out.${gone}-0123abcd.tmp`]);
      expect(leftByGone(folder, /^view-(\d+)-/)).toEqual([`view-${gone}-x`]);
      expect(leftByGone(join(folder, 'missing'), /(\d+)/)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
