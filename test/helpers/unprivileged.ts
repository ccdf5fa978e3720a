import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { bin, type Ran, ran, root } from './cli.js';

const nobody = 65534;
let installed: string | undefined;

/**
 * Root reads every file whatever its mode, so to test an unreadable file the binary must run as another user.
 * Returns the binary to run as `nobody`: the repository's own if that user can reach it, else a copy of what
 * the program needs at run time in a world-readable temporary directory.
 */
function binaryForNobody(): string {
  if (installed) return installed;
  const probe = spawnSync(process.execPath, [bin, '--version'], { uid: nobody, gid: nobody });
  if (probe.status === 0) {
    installed = bin;
    return bin;
  }
  const dir = mkdtempSync(join(tmpdir(), 'replay-history-nobody-'));
  chmodSync(dir, 0o755);
  for (const part of ['bin', 'dist', 'package.json'])
    cpSync(join(root, part), join(dir, part), { recursive: true });
  for (const dep of ['better-sqlite3', 'bindings', 'file-uri-to-path', 'commander', 'chalk']) {
    const from = join(root, 'node_modules', dep);
    if (existsSync(from)) cpSync(from, join(dir, 'node_modules', dep), { recursive: true });
  }
  installed = join(dir, 'bin', 'replay-history.js');
  return installed;
}

export const isRoot = process.getuid?.() === 0;

/** Runs the CLI as an unprivileged user when the tests run as root, as the current user otherwise. */
export function runUnprivileged(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  if (!isRoot)
    return ran(
      execa(process.execPath, [bin, ...args], { reject: false, cwd, env: { NO_COLOR: '1', ...env } }),
    );
  return ran(
    execa(process.execPath, [binaryForNobody(), ...args], {
      reject: false,
      cwd,
      uid: nobody,
      gid: nobody,
      env: { NO_COLOR: '1', HOME: cwd, ...env },
    }),
  );
}
