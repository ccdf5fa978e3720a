import { sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageFile, programFile } from '../src/paths.js';

// The bundled CLI runs the same code from dist/<dir>/<module>.js (as tsc wrote it), from a chunk under dist/chunks/
// and from src/ under the tests: each must find the package's files and the compiled worker modules.

const url = (path: string) => pathToFileURL(path).href;
const at = (...parts: string[]) => parts.join(sep);

describe('packageFile', () => {
  it('finds a file of the package from a module anywhere under src/ or dist/', () => {
    const root = at('', 'opt', 'pkg', '');
    for (const module of [
      at('', 'opt', 'pkg', 'src', 'cli', 'commands', 'demo.ts'),
      at('', 'opt', 'pkg', 'dist', 'cli', 'commands', 'demo.js'),
      at('', 'opt', 'pkg', 'dist', 'cli', 'main.js'),
      at('', 'opt', 'pkg', 'dist', 'chunks', 'chunk-ABC123.js'),
    ])
      expect(packageFile(url(module), 'sample-sessions')).toBe(`${root}sample-sessions`);
  });

  it('takes the package’s own dist/ when a folder above it is named dist or src too', () => {
    expect(packageFile(url(at('', 'home', 'dist', 'src', 'pkg', 'dist', 'chunks', 'a.js')), 'licenses')).toBe(
      at('', 'home', 'dist', 'src', 'pkg', 'licenses'),
    );
    expect(packageFile(url(at('', 'work', 'dist', 'repo', 'src', 'export', 'a.ts')), 'LICENSE')).toBe(
      at('', 'work', 'dist', 'repo', 'LICENSE'),
    );
  });

  it('takes the folder above the module’s for a module under neither, without failing as it loads', () => {
    expect(packageFile(url(at('', 'opt', 'pkg', 'lib', 'a.js')), 'sample-sessions')).toBe(
      at('', 'opt', 'pkg', 'sample-sessions'),
    );
  });
});

describe('programFile', () => {
  it('names the compiled module from the program, bundled or not', () => {
    const worker = at('', 'opt', 'pkg', 'dist', 'export', 'scan-worker.js');
    for (const module of [
      at('', 'opt', 'pkg', 'dist', 'export', 'scan-thread.js'),
      at('', 'opt', 'pkg', 'dist', 'chunks', 'chunk-XYZ.js'),
      at('', 'opt', 'pkg', 'dist', 'cli', 'main.js'),
    ])
      expect(programFile(url(module), 'export/scan-worker.js')?.split('/').join(sep)).toBe(worker);
  });

  it('names nothing from the sources: there is no compiled module that would match them', () => {
    expect(
      programFile(url(at('', 'opt', 'pkg', 'src', 'export', 'scan-thread.ts')), 'export/scan-worker.js'),
    ).toBe(undefined);
    expect(programFile(url(at('', 'opt', 'pkg', 'lib', 'a.js')), 'export/scan-worker.js')).toBe(undefined);
  });
});
