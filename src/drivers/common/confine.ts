import type { CopyOnWrite } from '../../verify/overlay.js';
import { sandboxed } from '../../verify/sandbox.js';

/** Where a run lets an agent write: `--sandbox` (read-only but for its own root) or the copy-on-write view. */
export interface Confinement {
  sandbox?: { readOnly: string[]; bwrap?: string };
  view?: Pick<CopyOnWrite, 'wrap'>;
}

/**
 * An agent's command line as every driver runs it: under `--sandbox`, in bubblewrap with the workspace and the
 * checked roots read-only and only the driver's own root writable; else inside the session's copy-on-write view
 * of the checked directories, where the machine allows one; else as it is.
 */
export function confined(
  argv: string[],
  run: Confinement,
  where: { sessionId: string; workspace: string; root: string },
): string[] {
  if (run.sandbox) {
    return sandboxed(argv, {
      readOnly: [...new Set([where.workspace, ...run.sandbox.readOnly])],
      writable: [where.root],
      network: true,
      cwd: where.workspace,
      ...(run.sandbox.bwrap ? { bwrap: run.sandbox.bwrap } : {}),
    });
  }
  return run.view ? run.view.wrap(argv, where.sessionId, where.workspace) : argv;
}
