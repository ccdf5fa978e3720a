// Finding the `claude` binary: `--claude-bin`, else `claude` on PATH (most users have it), else the one in
// this project's own node_modules (the pinned devDependency the tests use). It is never a dependency of
// replay-history: the package is hundreds of MB. Another version than the tested one runs, with a warning.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executable, onPath } from '../common/binary.js';

const require = createRequire(import.meta.url);

export class ClaudeNotFound extends Error {}

export interface ClaudeBinary {
  path: string;
  /** What `claude --version` printed (`2.1.328`), or undefined. */
  version?: string;
  from: 'option' | 'path' | 'package';
}

/**
 * The pinned package's binary: the platform package's own (there even when npm ran no install scripts), else
 * the wrapper's `bin/claude.exe` (which its postinstall replaces with that same binary).
 */
function packaged(): string[] {
  const found: string[] = [];
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  for (const name of [
    `@anthropic-ai/claude-code-${process.platform}-${arch}`,
    `@anthropic-ai/claude-code-${process.platform}-${arch}-musl`,
  ]) {
    try {
      const path = join(dirname(require.resolve(`${name}/package.json`)), 'claude');
      if (executable(path)) found.push(path);
    } catch {
      // Not installed for this machine.
    }
  }
  try {
    const path = join(
      dirname(require.resolve('@anthropic-ai/claude-code/package.json')),
      'bin',
      'claude.exe',
    );
    if (executable(path)) found.push(path);
  } catch {
    // Not installed.
  }
  return found;
}

function versionOf(path: string, env: NodeJS.ProcessEnv): string | undefined {
  const probe = spawnSync(path, ['--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...env, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
  });
  return /\d+\.\d+\.\d+\S*/.exec(probe.stdout ?? '')?.[0];
}

/**
 * The binary to run, with its version. A `claude` that does not say its version (a wrapper whose install
 * script never ran) gives way to the next one found. Throws ClaudeNotFound saying what to do.
 */
export function findClaude(option?: string, env: NodeJS.ProcessEnv = process.env): ClaudeBinary {
  if (option) {
    if (!executable(option)) throw new ClaudeNotFound(`--claude-bin ${option}: not an executable file`);
    const version = versionOf(option, env);
    return { path: option, from: 'option', ...(version ? { version } : {}) };
  }
  const candidates: { path: string; from: ClaudeBinary['from'] }[] = [];
  const path = onPath('claude', env);
  if (path) candidates.push({ path, from: 'path' });
  for (const found of packaged()) candidates.push({ path: found, from: 'package' });
  if (candidates.length === 0) throw new ClaudeNotFound('no claude binary: there is no claude on PATH');
  for (const candidate of candidates) {
    const version = versionOf(candidate.path, env);
    if (version) return { ...candidate, version };
  }
  return candidates[0] as ClaudeBinary;
}
