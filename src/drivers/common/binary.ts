// Looking for an agent's binary, the part every driver shares: is a path an executable, the first executable of a
// name on PATH, and (for the agents found the same way: an option, PATH, the pinned package) the whole search.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on the PATH of `env`, as a shell would find it. */
export function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

export interface FoundBinary {
  path: string;
  /** What `<binary> --version` printed (`0.24.4`), or undefined. */
  version?: string;
  from: 'option' | 'path' | 'package';
}

/** The version a binary prints for `--version`, or undefined. */
export function printedVersion(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 60_000,
): string | undefined {
  const probe = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: timeoutMs, env });
  return /\d+\.\d+\.\d+\S*/.exec(probe.stdout ?? '')?.[0];
}

/**
 * The binary to run: the option's path (`--qwen-bin`), else `command` on PATH, else the pinned package's
 * (`packaged`); the first that prints a version, with it. Throws `notFound` saying what was looked for.
 */
export function findBinary(spec: {
  option?: string;
  optionName: string;
  command: string;
  packaged: () => string | undefined;
  env?: NodeJS.ProcessEnv;
  notFound: new (message: string) => Error;
}): FoundBinary {
  const env = spec.env ?? process.env;
  if (spec.option) {
    if (!executable(spec.option))
      throw new spec.notFound(`${spec.optionName} ${spec.option}: not an executable file`);
    const version = printedVersion(spec.option, env);
    return { path: spec.option, from: 'option', ...(version ? { version } : {}) };
  }
  const candidates: { path: string; from: FoundBinary['from'] }[] = [];
  const path = onPath(spec.command, env);
  if (path) candidates.push({ path, from: 'path' });
  const found = spec.packaged();
  if (found) candidates.push({ path: found, from: 'package' });
  if (candidates.length === 0)
    throw new spec.notFound(`no ${spec.command} binary: there is no ${spec.command} on PATH`);
  for (const candidate of candidates) {
    const version = printedVersion(candidate.path, env);
    if (version) return { ...candidate, version };
  }
  return candidates[0] as FoundBinary;
}
