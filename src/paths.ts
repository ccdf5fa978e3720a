import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where the package's own files are, from any module of it. A module cannot name them relative to itself: the
// CLI is bundled (scripts/bundle.mjs), so the same code runs from dist/<dir>/<module>.js as tsc wrote it, from a
// chunk of the bundle under dist/chunks/, and from src/ under the tests.

/** The package's root: the folder holding the src/ or dist/ that `moduleUrl` is under. */
function split(moduleUrl: string): { root: string; compiled: boolean } | undefined {
  const path = fileURLToPath(moduleUrl);
  const dist = path.lastIndexOf(`${sep}dist${sep}`);
  const src = path.lastIndexOf(`${sep}src${sep}`);
  if (dist === -1 && src === -1) return undefined;
  return dist > src
    ? { root: path.slice(0, dist + 1), compiled: true }
    : { root: path.slice(0, src + 1), compiled: false };
}

/**
 * A file of the package (`sample-sessions/…`, `licenses/…`), from the module whose `import.meta.url` is given.
 * Under neither src/ nor dist/ (the package taken apart by hand), the folder above the module's stands for the
 * root: what is looked for there is then missing, and the caller says so, rather than every command failing as
 * its modules load.
 */
export function packageFile(moduleUrl: string, path: string): string {
  const at = split(moduleUrl);
  return at ? at.root + path : join(dirname(fileURLToPath(moduleUrl)), '..', path);
}

/**
 * A file of the compiled program (`dist/<path>`, e.g. a worker thread's module); undefined when the module runs
 * from the sources (under the tests), where there is no compiled file to start that would match them.
 */
export function programFile(moduleUrl: string, path: string): string | undefined {
  const at = split(moduleUrl);
  return at?.compiled ? `${at.root}dist${sep}${path}` : undefined;
}
