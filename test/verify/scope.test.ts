import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { broadDirectories, tooBroad } from '../../src/verify/scope.js';
import { tempDir } from '../helpers/cli.js';

// Which recorded cwds the checker walks, with a fake HOME and TMPDIR: real directories under a test dir, so
// "the home directory" and "the temp dir" are ones the test controls.
let dir: ReturnType<typeof tempDir>;
let base: string;
let home: string;
let temp: string;
let broad: ReturnType<typeof broadDirectories>;

beforeEach(() => {
  dir = tempDir('replay-history-scope-');
  base = realpathSync(dir.path);
  home = join(base, 'users', 'ada');
  temp = join(base, 'scratch', 'tmp');
  mkdirSync(join(home, 'src', 'app'), { recursive: true });
  mkdirSync(join(temp, 'project'), { recursive: true });
  broad = broadDirectories({ HOME: home, TMPDIR: `${temp}/` });
});
afterEach(() => dir.remove());

describe('broad directories', () => {
  it('are /, the home directory and the temp dirs (TMPDIR, /tmp, /var/tmp), canonical', () => {
    expect(broad.map((b) => b.path)).toEqual(['/', home, temp, realpathSync('/tmp'), '/var/tmp']);
  });

  it('skip a recorded cwd that is one of them, saying which', () => {
    expect(tooBroad('/', broad)).toBe('the file-system root');
    expect(tooBroad(home, broad)).toBe('the home directory');
    expect(tooBroad(temp, broad)).toBe('the temp directory');
    expect(tooBroad(`${temp}/`, broad)).toBe('the temp directory');
    expect(tooBroad('/tmp', broad)).toBe('the temp directory');
    expect(tooBroad('/var/tmp', broad)).toBe('the temp directory');
  });

  it('skip a directory above one of them: walking it would walk that one too', () => {
    expect(tooBroad(join(base, 'users'), broad)).toBe(`above the home directory (${home})`);
    expect(tooBroad(join(base, 'scratch'), broad)).toBe(`above the temp directory (${temp})`);
    expect(tooBroad(base, broad)).toMatch(/^above the home directory/);
    expect(tooBroad('/var', broad)).toBe('above the temp directory (/var/tmp)');
  });

  it('check a directory below one of them, and one beside them', () => {
    expect(tooBroad(join(home, 'src', 'app'), broad)).toBeUndefined();
    expect(tooBroad(join(home, 'src'), broad)).toBeUndefined();
    expect(tooBroad(join(temp, 'project'), broad)).toBeUndefined();
    expect(tooBroad('/var/tmp/build', broad)).toBeUndefined();
    expect(tooBroad(join(base, 'elsewhere'), broad)).toBeUndefined();
  });

  it('see through a symlink: a cwd recorded through a link to the home directory is the home directory', () => {
    const link = join(base, 'home-link');
    symlinkSync(home, link);
    expect(tooBroad(link, broad)).toBe('the home directory');
    expect(tooBroad(join(link, 'src'), broad)).toBeUndefined();
  });

  it('take the real home and temp dir from the process when the environment names none', () => {
    const paths = broadDirectories({}).map((b) => b.path);
    expect(paths[0]).toBe('/');
    expect(paths).toContain(realpathSync('/tmp'));
  });
});
