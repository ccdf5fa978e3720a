// Finding the `qwen` binary: `--qwen-bin`, else `qwen` on PATH (an `npm i -g @qwen-code/qwen-code` puts its
// entry script there), else this project's own node_modules (the pinned devDependency the tests use:
// `@qwen-code/qwen-code/cli-entry.js`, a Node script). It is never a dependency of replay-history. It declares
// Node >= 22 and runs on Node 20. Another version than the tested one runs, with a warning.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executable, onPath } from '../common/binary.js';

const require = createRequire(import.meta.url);

export class QwenNotFound extends Error {}

export interface QwenBinary {
  path: string;
  /** What `qwen --version` printed (`0.24.4`), or undefined. */
  version?: string;
  from: 'option' | 'path' | 'package';
}

/** The pinned package's entry script, where it is installed. */
function packaged(): string | undefined {
  try {
    const root = dirname(require.resolve('@qwen-code/qwen-code/package.json'));
    const path = join(root, 'cli-entry.js');
    return executable(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

export function versionOf(path: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 60_000, env });
  return /\d+\.\d+\.\d+\S*/.exec(probe.stdout ?? '')?.[0];
}

/** The binary to run, with its version. Throws QwenNotFound saying what was looked for. */
export function findQwen(option?: string, env: NodeJS.ProcessEnv = process.env): QwenBinary {
  if (option) {
    if (!executable(option)) throw new QwenNotFound(`--qwen-bin ${option}: not an executable file`);
    const version = versionOf(option, env);
    return { path: option, from: 'option', ...(version ? { version } : {}) };
  }
  const candidates: { path: string; from: QwenBinary['from'] }[] = [];
  const path = onPath('qwen', env);
  if (path) candidates.push({ path, from: 'path' });
  const found = packaged();
  if (found) candidates.push({ path: found, from: 'package' });
  if (candidates.length === 0) throw new QwenNotFound('no qwen binary: there is no qwen on PATH');
  for (const candidate of candidates) {
    const version = versionOf(candidate.path, env);
    if (version) return { ...candidate, version };
  }
  return candidates[0] as QwenBinary;
}
