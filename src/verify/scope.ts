// Which recorded cwds the checker walks. A session recorded in /, a home directory or the temp dir would have
// the checker hash everything there (a real run: all of /tmp, 66,816 entries, 42.7 s of a 57 s replay) and
// report the writes of every other program on the machine. Those cwds are skipped and said so; a directory the
// user names with --watch is checked whatever it is.
import { homedir, tmpdir } from 'node:os';
import { canonicalPath } from './check.js';

/** A directory too broad to walk because a session happened to be recorded there, and what it is. */
export interface Broad {
  path: string;
  what: string;
}

/**
 * The directories never walked on a recorded cwd's account: the file-system root, the home directory and the
 * system temp dirs (the one Node reports from $TMPDIR, and /tmp and /var/tmp, where programs write whatever
 * $TMPDIR says). Canonical, so a symlinked home or temp dir compares with a canonical cwd.
 */
export function broadDirectories(env: NodeJS.ProcessEnv = process.env): Broad[] {
  const home = env.HOME || homedir();
  // os.tmpdir() reads TMPDIR from the process's own environment; `env` may be another one (tests).
  const temp = env.TMPDIR ? env.TMPDIR.replace(/(.)\/+$/, '$1') : tmpdir();
  const found: Broad[] = [{ path: '/', what: 'the file-system root' }];
  const add = (path: string, what: string) => {
    const canonical = canonicalPath(path);
    if (!found.some((known) => known.path === canonical)) found.push({ path: canonical, what });
  };
  if (home) add(home, 'the home directory');
  for (const path of [temp, '/tmp', '/var/tmp']) add(path, 'the temp directory');
  return found;
}

/**
 * Why a recorded cwd is not walked, or undefined when it is checked: it is one of the broad directories, or
 * above one (walking it would walk that one too). A directory below one (/tmp/project, ~/src/app) is checked.
 */
export function tooBroad(cwd: string, broad: readonly Broad[] = broadDirectories()): string | undefined {
  const path = canonicalPath(cwd);
  const same = broad.find((known) => known.path === path);
  if (same) return same.what;
  const below = broad.find((known) => known.path !== '/' && known.path.startsWith(`${path}/`));
  return below ? `above ${below.what} (${below.path})` : undefined;
}
