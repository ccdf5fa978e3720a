import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

/**
 * Where Qwen Code keeps sessions: `~/.qwen/projects/<cwd slug>/chats/<sessionId>.jsonl`. Only the folder if it
 * exists: `ingest` with no path reads every agent's roots, and a missing one is not an error.
 */
export function qwenRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const projects = join(env.HOME ?? homedir(), '.qwen', 'projects');
  return existsSync(projects) ? [projects] : [];
}

/** `…/.qwen/projects/<slug>/chats/<uuid>.jsonl`: where Qwen Code, and no other agent, writes a session. */
export function isChatPath(file: string): boolean {
  return /[\\/]\.qwen[\\/]projects[\\/][^\\/]+[\\/]chats[\\/][^\\/]+\.jsonl$/.test(file);
}

/** The session id for a file whose records name none: its file name. */
export function idFromName(file: string): string {
  return basename(file, '.jsonl');
}
