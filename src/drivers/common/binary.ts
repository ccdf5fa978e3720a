// Looking for an agent's binary, the part every driver shares: is a path an executable, and the first
// executable of a name on PATH.
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
