import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../helpers/cli.js';

// The build bundles the CLI (scripts/bundle.mjs): dist/cli/main.js and the chunks it loads. What the bundle must
// keep true, read from the built files themselves: it is what bin/ runs, the compiled modules it starts by path
// are there, and every npm package whose code it holds has its licence in dist/THIRD-PARTY-NOTICES.txt.

const dist = join(root, 'dist');
const bundle = () => [
  join(dist, 'cli', 'main.js'),
  ...readdirSync(join(dist, 'chunks')).map((name) => join(dist, 'chunks', name)),
];

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourcesUnder(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('the bundled CLI', () => {
  it('is what the binary runs: dist/cli/main.js is the bundle, its chunks beside it', () => {
    expect(readFileSync(join(dist, 'cli', 'main.js'), 'utf8')).toMatch(
      /^\/\/ replay-history: bundled by scripts\/bundle\.mjs/,
    );
    expect(readFileSync(join(root, 'bin', 'replay-history.js'), 'utf8')).toContain("'../dist/cli/main.js'");
    const chunks = readdirSync(join(dist, 'chunks'));
    expect(chunks.length).toBeGreaterThan(5);
    // Every chunk it imports, statically or when a command needs it, is there (a stale or partial bundle would
    // fail at the first command that loads a missing one).
    let imports = 0;
    for (const file of bundle())
      for (const match of readFileSync(file, 'utf8').matchAll(
        /from "(\.\.?\/[^"]+)"|import\("(\.\.?\/[^"]+)"\)/g,
      )) {
        const target = match[1] ?? (match[2] as string);
        imports++;
        expect(existsSync(join(file, '..', target)), `${file} imports ${target}`).toBe(true);
      }
    expect(imports).toBeGreaterThan(50);
  });

  it('finds every compiled module the code starts by path (worker threads) under dist/', () => {
    const named = sourcesUnder(join(root, 'src')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/programFile\(import\.meta\.url, '([^']+)'\)/g)].map(
        (m) => m[1],
      ),
    );
    expect(named).toEqual(expect.arrayContaining(['export/scan-worker.js', 'export/count-worker.js']));
    for (const path of named) expect(existsSync(join(dist, path as string)), path).toBe(true);
  });

  it('carries the licence of every npm package whose code it holds', () => {
    const packages = new Set<string>();
    for (const file of bundle())
      for (const [, name] of readFileSync(file, 'utf8').matchAll(
        /^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm,
      ))
        packages.add(name as string);
    // The SDKs and the CLI's own libraries are in it; the native addons are not.
    expect([...packages]).toEqual(
      expect.arrayContaining(['openai', '@anthropic-ai/sdk', 'commander', 'execa']),
    );
    expect([...packages]).not.toContain('better-sqlite3');
    const notices = readFileSync(join(dist, 'THIRD-PARTY-NOTICES.txt'), 'utf8');
    const sections = notices.split(`\n${'-'.repeat(78)}\n`);
    for (const name of packages) {
      const section = sections.find((text) => text.trimStart().startsWith(`${name} `));
      expect(section, `${name} has no section`).toBeDefined();
      // Its heading, then its licence's text (or, where it ships none, what its package.json says).
      expect((section as string).trim().split('\n').length, name).toBeGreaterThan(1);
    }
  });
});
