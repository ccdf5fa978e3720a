import { readdirSync, realpathSync, type Stats, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Warning } from './types.js';

export interface Found {
  file: string;
  stat: Stats;
  /** Named on the command line, not met while walking a directory. */
  explicit: boolean;
}

/**
 * Every file under a path (the path itself if it is a file), following symbolic links but visiting each
 * directory once, so a link loop ends. Unreadable entries become warnings; the walk goes on. Directories that
 * `prune` names are not entered (a format reads them through another file).
 */
export function discover(
  path: string,
  warnings: Warning[],
  prune: (dir: string) => boolean = () => false,
): Found[] {
  const found: Found[] = [];
  const root = resolve(path);
  let stat: Stats;
  try {
    stat = statSync(root);
  } catch (error) {
    throw new Error(describe(error as NodeJS.ErrnoException));
  }
  if (!stat.isDirectory()) return [{ file: root, stat, explicit: true }];

  const visited = new Set<string>();
  const walk = (dir: string): void => {
    let key: string;
    try {
      key = realpathSync(dir);
    } catch (error) {
      warnings.push(unreadable(dir, error));
      return;
    }
    if (visited.has(key)) {
      if (dir !== key)
        warnings.push({ file: dir, message: `symbolic link loop (back to ${key}); not followed` });
      return;
    }
    visited.add(key);
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (error) {
      warnings.push(unreadable(dir, error));
      return;
    }
    for (const name of names) {
      const entry = join(dir, name);
      let entryStat: Stats;
      try {
        entryStat = statSync(entry);
      } catch (error) {
        warnings.push(unreadable(entry, error));
        continue;
      }
      if (entryStat.isDirectory()) {
        if (!prune(entry)) walk(entry);
      } else if (entryStat.isFile()) found.push({ file: entry, stat: entryStat, explicit: false });
    }
  };
  walk(root);
  return found;
}

export function unreadable(file: string, error: unknown): Warning {
  return { file, message: describe(error as NodeJS.ErrnoException), unreadable: true };
}

export function describe(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ELOOP':
      return 'symbolic link loop';
    case 'EISDIR':
      return 'is a directory';
    default:
      return error.message;
  }
}
