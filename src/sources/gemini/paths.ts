import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/**
 * Where Gemini CLI keeps sessions: `~/.gemini/tmp/<project slug>/chats/`. Only if it exists: `ingest` with no
 * path reads every agent's roots, and a missing one of an agent the user does not run is not an error.
 */
export function geminiRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const tmp = join(env.HOME ?? homedir(), '.gemini', 'tmp');
  return existsSync(tmp) ? [tmp] : [];
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `session-<YYYY-MM-DDTHH-MM>-<first 8 of the session id>.jsonl` (or the legacy `.json`). */
export function isSessionName(file: string): boolean {
  return /^session-.*\.jsonl?$/.test(basename(file));
}

/** A sub-agent's log is `chats/<parent session id>/<agent id>.jsonl`: the parent's id, else undefined. */
export function parentSessionOf(file: string): string | undefined {
  const folder = dirname(file);
  return uuid.test(basename(folder)) && basename(dirname(folder)) === 'chats' ? basename(folder) : undefined;
}

/**
 * The project root of a log under `tmp/<slug>/chats/`: the slug folder's `.project_root`, else the root that
 * `~/.gemini/projects.json` maps to the slug; checked against the session's `projectHash` (sha256 of the root).
 */
export function projectRootOf(file: string, projectHash: unknown): string | undefined {
  let chats = dirname(file);
  if (basename(chats) !== 'chats') chats = dirname(chats);
  if (basename(chats) !== 'chats') return undefined;
  const slugFolder = dirname(chats);
  const candidates: string[] = [];
  try {
    candidates.push(readFileSync(join(slugFolder, '.project_root'), 'utf8').trim());
  } catch {
    // Older CLIs wrote no marker.
  }
  try {
    const projects = JSON.parse(
      readFileSync(join(dirname(dirname(slugFolder)), 'projects.json'), 'utf8'),
    ) as {
      projects?: Record<string, unknown>;
    };
    for (const [root, slug] of Object.entries(projects.projects ?? {}))
      if (slug === basename(slugFolder)) candidates.push(root);
  } catch {
    // No projects.json: the folder may be named by the hash itself (older CLIs).
  }
  const sha = (root: string) => createHash('sha256').update(root).digest('hex');
  return (
    candidates.find((root) => typeof projectHash === 'string' && sha(root) === projectHash) ??
    (typeof projectHash === 'string' ? undefined : candidates[0])
  );
}

/** Other session files of the same folder whose name ends with the same short id (a resume's stub, a legacy twin). */
export function siblingsOf(file: string): string[] {
  const name = basename(file);
  const short = /-([0-9a-f]{8})\.jsonl?$/i.exec(name)?.[1];
  if (!short || !isSessionName(file)) return [];
  const folder = dirname(file);
  try {
    return readdirSync(folder)
      .filter(
        (other) => other !== name && isSessionName(other) && other.replace(/\.jsonl?$/, '').endsWith(short),
      )
      .map((other) => join(folder, other));
  } catch {
    return [];
  }
}
