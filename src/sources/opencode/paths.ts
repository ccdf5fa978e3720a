import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';

/** opencode's data dir: `Global.Path.data` = `${XDG_DATA_HOME:-~/.local/share}/opencode` (macOS too). */
export function opencodeRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const base = env.XDG_DATA_HOME || join(env.HOME ?? homedir(), '.local', 'share');
  const dir = join(base, 'opencode');
  return existsSync(dir) ? [dir] : [];
}

/** `opencode.db`, or `opencode-<channel>.db` for channels other than latest/beta. */
export function isDatabaseName(file: string): boolean {
  return /^opencode(-[\w.-]+)?\.db$/.test(basename(file));
}

/** The storage tree's session files: `<data>/storage/session/<projectID>/<sessionID>.json`. */
export function treeSession(file: string): { storage: string; sessionId: string } | undefined {
  if (!file.endsWith('.json')) return undefined;
  const project = dirname(file);
  const sessions = dirname(project);
  const storage = dirname(sessions);
  if (basename(sessions) !== 'session' || basename(storage) !== 'storage') return undefined;
  return { storage, sessionId: basename(file, '.json') };
}

export const messageDir = (storage: string, sessionId: string): string => join(storage, 'message', sessionId);
export const partDir = (storage: string, messageId: string): string => join(storage, 'part', messageId);

/** Storage-tree folders read through a session file (thousands of small files), or not sessions at all. */
const treeFolders = new Set([
  'message',
  'part',
  'session_diff',
  'todo',
  'session_share',
  'permission',
  'project',
]);
/** Data-dir folders that hold no sessions: the snapshot git repos can hold a copy of every project file. */
const dataFolders = new Set(['snapshot', 'tool-output', 'log', 'bin']);

/** Is this a folder the walker should not enter? Looks at names first, touches the disk only for candidates. */
export function pruned(dir: string): boolean {
  const name = basename(dir);
  const parent = dirname(dir);
  if (treeFolders.has(name) && basename(parent) === 'storage')
    return existsSync(join(parent, 'session')) || existsSync(join(parent, 'message'));
  if (dataFolders.has(name))
    return existsSync(join(parent, 'opencode.db')) || existsSync(join(parent, 'storage', 'session'));
  return false;
}

/** Short form of a path for messages (the storage-relative part of a tree file). */
export function treeRelative(storage: string, file: string): string {
  return file.startsWith(storage + sep) ? file.slice(storage.length + 1) : file;
}
