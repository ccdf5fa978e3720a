// Finding the opencode binary: `--opencode-bin`, else the pinned per-platform package this project installs
// (npm `opencode-ai` only links one of these), else `opencode` on PATH. The plugin is written for one version;
// another is allowed (the plugin fails the run for any built-in it does not know) but said out loud.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
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

function packaged(): string | undefined {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = platform === 'windows' ? 'opencode.exe' : 'opencode';
  for (const variant of ['', '-baseline', '-musl', '-baseline-musl']) {
    try {
      const path = join(
        dirname(require.resolve(`opencode-${platform}-${arch}${variant}/package.json`)),
        'bin',
        name,
      );
      if (existsSync(path)) return path;
    } catch {
      // Not installed for this machine; try the next.
    }
  }
  return undefined;
}

function onPath(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, 'opencode');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The binary to run, with its version. Throws OpencodeNotFound with what to do. */
export function findOpencode(option?: string, env: NodeJS.ProcessEnv = process.env): Binary {
  let path: string | undefined;
  let from: Binary['from'];
  if (option) {
    try {
      accessSync(option, constants.X_OK);
    } catch {
      throw new OpencodeNotFound(`--opencode-bin ${option}: not an executable file`);
    }
    path = option;
    from = 'option';
  } else {
    path = packaged();
    from = 'package';
    if (!path) {
      path = onPath(env);
      from = 'path';
    }
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
