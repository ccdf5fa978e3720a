import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type Result } from 'execa';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const bin = join(root, 'bin', 'replay-history.js');

/** Runs the built binary as a user would, never throwing on a non-zero exit. */
export async function run(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string } = {},
): Promise<Result> {
  return execa('node', [bin, ...args], {
    reject: false,
    cwd: options.cwd ?? root,
    env: { NO_COLOR: '1', ...options.env },
    extendEnv: true,
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(prefix = 'replay-history-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
