import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

/**
 * Where Codex CLI keeps rollouts: `$CODEX_HOME/sessions`, else `~/.codex/sessions` (then `YYYY/MM/DD/`). Only
 * folders that exist: `ingest` with no path reads every agent's roots, and a missing one of an agent the user
 * does not run is not an error. `archived_sessions/` is left to an explicit path (it can hold the same sessions).
 */
export function codexRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.CODEX_HOME?.trim() || join(env.HOME ?? homedir(), '.codex');
  const sessions = join(home, 'sessions');
  return existsSync(sessions) ? [sessions] : [];
}

const uuid = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** `rollout-2026-02-23T12-47-42-<thread uuid>.jsonl`: the thread id, for a file whose session_meta is unreadable. */
export function idFromName(file: string): string {
  return uuid.exec(file)?.[1] ?? basename(file, '.jsonl');
}

export function isRolloutName(file: string): boolean {
  return /^rollout-.*\.jsonl$/.test(basename(file));
}
