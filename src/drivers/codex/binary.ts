// Finding the `codex` binary: `--codex-bin`, else `codex` on PATH (an `npm i -g @openai/codex` puts its Node
// launcher there, which runs the native binary), else the native binary of this project's own node_modules
// (the pinned devDependency the tests use: `@openai/codex-<platform>-<arch>/vendor/<target>/bin/codex`). It is
// never a dependency of replay-history: the package is hundreds of MB. Another version than the tested one runs,
// with a warning.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executable, onPath } from '../common/binary.js';

const require = createRequire(import.meta.url);

export class CodexNotFound extends Error {}

export interface CodexBinary {
  path: string;
  /** What `codex --version` printed (`codex-cli 0.169.0` → `0.169.0`), or undefined. */
  version?: string;
  from: 'option' | 'path' | 'package';
}

/** The Rust target the platform package ships its binary under. */
function target(): string | undefined {
  const arch = process.arch === 'arm64' ? 'aarch64' : process.arch === 'x64' ? 'x86_64' : undefined;
  if (!arch) return undefined;
  if (process.platform === 'linux') return `${arch}-unknown-linux-musl`;
  if (process.platform === 'darwin') return `${arch}-apple-darwin`;
  return undefined;
}

/** The pinned package's native binary, where it is installed for this machine. */
function packaged(): string | undefined {
  const triple = target();
  if (!triple) return undefined;
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  try {
    const root = dirname(require.resolve(`@openai/codex-${process.platform}-${arch}/package.json`));
    const path = join(root, 'vendor', triple, 'bin', 'codex');
    return executable(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

export function versionOf(path: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 60_000, env });
  return /\d+\.\d+\.\d+\S*/.exec(probe.stdout ?? '')?.[0];
}

/** The binary to run, with its version. Throws CodexNotFound saying what was looked for. */
export function findCodex(option?: string, env: NodeJS.ProcessEnv = process.env): CodexBinary {
  if (option) {
    if (!executable(option)) throw new CodexNotFound(`--codex-bin ${option}: not an executable file`);
    const version = versionOf(option, env);
    return { path: option, from: 'option', ...(version ? { version } : {}) };
  }
  const candidates: { path: string; from: CodexBinary['from'] }[] = [];
  const path = onPath('codex', env);
  if (path) candidates.push({ path, from: 'path' });
  const found = packaged();
  if (found) candidates.push({ path: found, from: 'package' });
  if (candidates.length === 0) throw new CodexNotFound('no codex binary: there is no codex on PATH');
  for (const candidate of candidates) {
    const version = versionOf(candidate.path, env);
    if (version) return { ...candidate, version };
  }
  return candidates[0] as CodexBinary;
}
