// Finding the `claude` binary: `--claude-bin`, else `claude` on PATH (most users have it), else the one in
// this project's own node_modules (the pinned devDependency the tests use). It is never a dependency of
// replay-history: the package is hundreds of MB. Another version than the tested one runs, with a warning.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

export class ClaudeNotFound extends Error {}

export interface ClaudeBinary {
  path: string;
  /** What `claude --version` printed (`2.1.328`), or undefined. */
  version?: string;
  from: 'option' | 'path' | 'package';
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'claude'))) return join(dir, 'claude');
  }
  return undefined;
}

function packaged(): string | undefined {
  try {
    const manifest = require.resolve('@anthropic-ai/claude-code/package.json');
    const path = join(dirname(manifest), 'bin', 'claude.exe');
    return executable(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The binary to run, with its version. Throws ClaudeNotFound saying what to do. */
export function findClaude(option?: string, env: NodeJS.ProcessEnv = process.env): ClaudeBinary {
  let path: string | undefined;
  let from: ClaudeBinary['from'] = 'option';
  if (option) {
    if (!executable(option)) throw new ClaudeNotFound(`--claude-bin ${option}: not an executable file`);
    path = option;
  } else {
    path = onPath(env);
    from = 'path';
    if (!path) {
      path = packaged();
      from = 'package';
    }
  }
  if (!path) throw new ClaudeNotFound('no claude binary: there is no claude on PATH');
  const probe = spawnSync(path, ['--version'], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...env, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
  });
  const version = /\d+\.\d+\.\d+\S*/.exec(probe.stdout ?? '')?.[0];
  return { path, from, ...(version ? { version } : {}) };
}
