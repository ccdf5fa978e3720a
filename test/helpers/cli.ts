import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const bin = join(root, 'bin', 'replay-history.js');

export interface Ran {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the built binary as a user would, never throwing on a non-zero exit. */
export async function run(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; input?: string } = {},
): Promise<Ran> {
  return ran(
    execa('node', [bin, ...args], {
      reject: false,
      cwd: options.cwd ?? root,
      env: { NO_COLOR: '1', ...options.env },
      extendEnv: true,
      ...(options.input !== undefined ? { input: options.input } : {}),
    }),
  );
}

/** The parts of a finished child process the tests look at, as plain strings. */
export async function ran(
  child: Promise<{ exitCode?: number; stdout?: unknown; stderr?: unknown }>,
): Promise<Ran> {
  const result = await child;
  return {
    exitCode: result.exitCode ?? -1,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
  };
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(prefix = 'replay-history-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
