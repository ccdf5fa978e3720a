#!/usr/bin/env node
// The CLI as one bundle (dist/cli/main.js and the chunks it loads, dist/chunks/), made from what tsc wrote to dist/.
// Why: node resolves, reads and links each ES module on its own, and a command loaded 200 to 260 of them (the
// OpenAI SDK alone is 115) before doing anything — most of a replay's start-up beyond node's. Split into chunks,
// each command still loads only the code it runs.
//
// Everything else tsc wrote stays: the worker threads' modules (dist/export/*-worker.js, started by path) and
// every module the benchmarks import one by one. Native addons stay outside the bundle, and so does whatever the
// code loads at run time through createRequire (gpt-tokenizer's ranks, smol-toml, the agents' packages).
//
// The bundle holds copies of the npm packages it takes in: their licences and notices are written beside it, to
// dist/THIRD-PARTY-NOTICES.txt, which the published package carries.
//
//   node scripts/bundle.mjs        (after tsc: `npm run build` runs both)
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const entry = join(dist, 'cli', 'main.js');
const marker = '// replay-history: bundled by scripts/bundle.mjs';

if (readFileSync(entry, 'utf8').startsWith(marker)) {
  console.error(`${entry} is a bundle already: run tsc first (npm run build)`);
  process.exit(1);
}

const out = join(dist, '.bundle');
rmSync(out, { recursive: true, force: true });
const { metafile } = await build({
  metafile: true,
  entryPoints: [entry],
  outbase: dist,
  outdir: out,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Native addons, loaded from node_modules as they are.
  external: ['better-sqlite3', '@parcel/watcher', '@napi-rs/xattr'],
  // CommonJS packages in the bundle call require(), which an ES module does not have.
  banner: {
    js: `${marker} (third-party code in it: dist/THIRD-PARTY-NOTICES.txt)\nimport { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);`,
  },
  logLevel: 'warning',
});
// Made before anything of tsc's is replaced: a failure leaves dist/ as tsc wrote it.
const third = notices(Object.keys(metafile.inputs));
rmSync(join(dist, 'chunks'), { recursive: true, force: true });
renameSync(join(out, 'chunks'), join(dist, 'chunks'));
renameSync(join(out, 'cli', 'main.js'), entry);
rmSync(out, { recursive: true, force: true });
writeFileSync(join(dist, 'THIRD-PARTY-NOTICES.txt'), third);

/** The licence and notice files of every npm package with a module in the bundle, each under its name. */
function notices(inputs) {
  const packages = new Set();
  for (const input of inputs) {
    const parts = relative(root, join(root, input)).split(sep);
    const at = parts.lastIndexOf('node_modules');
    if (at === -1) continue;
    const name = parts[at + 1]?.startsWith('@') ? parts.slice(at + 1, at + 3) : parts.slice(at + 1, at + 2);
    packages.add(join(...parts.slice(0, at + 1), ...name));
  }
  const sections = [...packages].sort().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    const files = readdirSync(join(root, dir)).filter((file) => /^(licen[cs]e|copying|notice)/i.test(file));
    const texts = files.map((file) => readFileSync(join(root, dir, file), 'utf8').trim());
    if (texts.length === 0)
      texts.push(`(it ships no licence file; its package.json says ${manifest.license})`);
    return [`${manifest.name} ${manifest.version} (${manifest.license})`, ...texts].join('\n\n');
  });
  const head =
    'replay-history bundles code of the npm packages below into dist/cli/main.js and dist/chunks/. Their licences\nand notices follow, each under the package that holds it.';
  return `${[head, ...sections].join(`\n\n${'-'.repeat(78)}\n\n`)}\n`;
}
