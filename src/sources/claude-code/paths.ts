import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects` (a comma-separated list is allowed, as
 * ccusage reads it), else `~/.claude/projects`, and `~/.config/claude/projects` used by some installs.
 */
export function claudeRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const configured = env.CLAUDE_CONFIG_DIR?.split(',')
    .map((dir) => dir.trim())
    .filter(Boolean);
  if (configured && configured.length > 0) return configured.map((dir) => join(dir, 'projects'));
  const home = env.HOME ?? homedir();
  return [join(home, '.claude', 'projects'), join(home, '.config', 'claude', 'projects')].filter((dir) =>
    existsSync(dir),
  );
}

/** `…/<session>/subagents/agent-<id>.jsonl` has a sidecar `agent-<id>.meta.json` in newer builds. */
export function metaPathFor(file: string): string {
  return file.replace(/\.jsonl$/, '.meta.json');
}
