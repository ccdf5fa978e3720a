import { existsSync, type Stats, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

/** docker-agent's default file name for its store (`<data dir>/session.db`; `--session-db` overrides it). */
export const storeName = 'session.db';

/**
 * Every place docker-agent's store may be by default, existing ones only. The data dir is `$XDG_DATA_HOME/cagent`
 * when that is set (on every platform), else `~/.local/share/cagent` on Linux, `~/Library/Application
 * Support/cagent` on macOS, `%LocalAppData%\cagent` on Windows. Builds between the XDG move and the native
 * macOS/Windows dirs used `~/.local/share/cagent` everywhere, and builds before it used `~/.cagent` (still read
 * while the new dir does not exist, until docker-agent moves it). `--data-dir` and `--session-db` are flags
 * only; docker-agent reads no environment variable for them.
 */
export function dockerAgentStores(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string[] {
  const home = env.HOME || env.USERPROFILE || homedir();
  const dirs: string[] = [];
  if (env.XDG_DATA_HOME) dirs.push(join(env.XDG_DATA_HOME, 'cagent'));
  if (platform === 'darwin') dirs.push(join(home, 'Library', 'Application Support', 'cagent'));
  if (platform === 'win32')
    dirs.push(join(env.LocalAppData || env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'cagent'));
  dirs.push(join(home, '.local', 'share', 'cagent'), join(home, '.cagent'));
  return [...new Set(dirs)].map((dir) => join(dir, storeName)).filter((file) => existsSync(file));
}

export function isStoreName(file: string): boolean {
  return basename(file) === storeName;
}

/** The write-ahead log beside a database: un-checkpointed writes live there. */
export function walOf(file: string): string {
  return `${file}-wal`;
}

export function statIfPresent(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
