import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** bubblewrap is missing or cannot create namespaces here; the message says which and what to do. */
export class SandboxUnavailable extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'SandboxUnavailable';
  }
}

export interface SandboxOptions {
  /** Made read-only inside the sandbox (the watched roots). */
  readOnly: readonly string[];
  /** Left writable although inside a read-only path (the tool's own outputs); only paths that exist. */
  writable?: readonly string[];
  /** The bwrap binary (default: found on PATH). */
  bwrap?: string;
  /**
   * Keep the host's network (default: none but a private loopback). The opencode driver needs it: opencode
   * reaches our proxy and answer server on the host's 127.0.0.1, and every tool it has is ours anyway.
   */
  network?: boolean;
  /** The working directory inside (default: ours). */
  cwd?: string;
}

/**
 * Checks that bubblewrap runs here: it can be installed and still fail, e.g. where unprivileged user namespaces
 * are switched off (Ubuntu 24.04's AppArmor default) or inside a container without CAP_SYS_ADMIN.
 */
export function probeSandbox(bwrap = 'bwrap'): void {
  const probe = spawnSync(bwrap, ['--bind', '/', '/', '--unshare-net', '--die-with-parent', 'true'], {
    encoding: 'utf8',
  });
  if (probe.error && (probe.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new SandboxUnavailable(
      '--sandbox needs bubblewrap (bwrap), which is not installed',
      'install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox: the checker still reports every change',
    );
  }
  if (probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim();
    throw new SandboxUnavailable(
      `bubblewrap cannot make a sandbox here: ${why}`,
      'unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, or AppArmor on Ubuntu 24.04+); run without --sandbox: the checker still reports every change',
    );
  }
}

/**
 * The argv that runs a command under bubblewrap: the whole file system as it is, except the read-only paths
 * (writes fail with EROFS) and no network but a private loopback. The process dies with us.
 */
export function sandboxed(argv: readonly string[], options: SandboxOptions): string[] {
  const args = [options.bwrap ?? 'bwrap', '--dev-bind', '/', '/'];
  if (!options.network) args.push('--unshare-net');
  args.push('--die-with-parent');
  for (const path of options.readOnly) args.push('--ro-bind', path, path);
  for (const path of options.writable ?? []) if (existsSync(path)) args.push('--bind', path, path);
  args.push('--chdir', options.cwd ?? process.cwd(), '--', ...argv);
  return args;
}
