// Finding the opencode binary: `--opencode-bin`, else the pinned per-platform package this project installs
// (npm `opencode-ai` only links one of these), else `opencode` on PATH. The plugin is written for one version;
// another is allowed (the plugin fails the run for any built-in it does not know) but said out loud.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executable, onPath } from '../common/binary.js';
import { opencodeVersion } from './environment.js';

const require = createRequire(import.meta.url);

export class OpencodeNotFound extends Error {}

export interface Binary {
  path: string;
  /** What `opencode --version` printed, or undefined when it printed nothing usable. */
  version?: string;
  /** Where it was found. */
  from: 'option' | 'package' | 'path';
}

/** The pinned platform package's binary, with the version its package.json names (no need to run it). */
function packaged(): { path: string; version?: string } | undefined {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = platform === 'windows' ? 'opencode.exe' : 'opencode';
  for (const variant of ['', '-baseline', '-musl', '-baseline-musl']) {
    try {
      const manifest = require.resolve(`opencode-${platform}-${arch}${variant}/package.json`);
      const path = join(dirname(manifest), 'bin', name);
      if (!existsSync(path)) continue;
      const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
      return { path, ...(typeof version === 'string' ? { version } : {}) };
    } catch {
      // Not installed for this machine; try the next.
    }
  }
  return undefined;
}

/** The binary to run, with its version. Throws OpencodeNotFound with what to do. */
export function findOpencode(option?: string, env: NodeJS.ProcessEnv = process.env): Binary {
  let path: string | undefined;
  let from: Binary['from'];
  if (option) {
    if (!executable(option)) throw new OpencodeNotFound(`--opencode-bin ${option}: not an executable file`);
    path = option;
    from = 'option';
  } else {
    const found = packaged();
    if (found?.version) return { path: found.path, version: found.version, from: 'package' };
    path = found?.path ?? onPath('opencode', env);
    from = found ? 'package' : 'path';
  }
  if (!path) {
    throw new OpencodeNotFound(
      `no opencode binary: the pinned opencode-${process.platform}-${process.arch} ${opencodeVersion} package is not installed and there is no opencode on PATH`,
    );
  }
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000, env });
  const version = /\d+\.\d+\.\d+\S*/.exec(probe.stdout ?? '')?.[0];
  return { path, from, ...(version ? { version } : {}) };
}
