#!/usr/bin/env node
// Deterministic generator of a realistic source tree for the verify benchmark, committed into a git repository.
//
// The tree: N regular files in nested directories (about 10–30 files per directory, depth up to 6, some
// directories that only hold directories), named like a mixed TypeScript/Python/Go monorepo. Sizes are
// log-normal around 3 KiB (capped at 256 KiB), with 1% empty files, 3% binary assets (PNG, WOFF, …; median
// 6 KiB) and 0.2% large files (150 KiB–1 MiB: bundles, lock files, fixtures). Text files are slices of a pool
// of code-like lines behind a header naming the file, so no two non-trivial files have the same content. Also
// 0.25% symlinks to files (relative), one directory symlink per ~2,000 files (to a directory that is not an
// ancestor, so nothing loops), one dangling symlink, and about 1% extra empty directories. Every entry gets a
// fixed, seeded mtime in 2023.
//
// Then `git init`, `git add -A`, `git commit` with a fixed identity and date (no user or system git config),
// `git repack -a -d` (one pack, as a clone has, instead of one loose object per file) and a `git status` that
// must print nothing, which also leaves the index fresh.
//
// Module: `generate({ dir, files, seed })` → { files, bytes, largestFile, dirs, … } (the tree is `dir`).
//         `gitEnv()`: the environment every git command of the benchmark runs with.
// CLI:    node bench/verify/generate.mjs --dir /tmp/tree --files 10000 [--seed 1]

import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../ingest/random.mjs';

const KiB = 1024;
const MiB = 1024 * KiB;
const MAX_DEPTH = 6;

// ---------------------------------------------------------------------------------------------------------
// Names

const DIR_WORDS = (
  'src lib app core api server client web ui components hooks utils helpers internal pkg cmd services ' +
  'models views controllers routes handlers middleware store state db migrations schema config scripts ' +
  'tools test tests spec fixtures mocks e2e integration unit docs examples assets styles images fonts ' +
  'public static i18n locales auth billing search cache queue jobs workers events plugins adapters ' +
  'providers storage net http grpc proto types interfaces common shared platform infra deploy cli'
).split(' ');
const FILE_WORDS = (
  'index main app server client router handler service model view controller store reducer actions ' +
  'selectors hooks utils helpers config constants types errors logger cache queue worker job parser ' +
  'formatter validator schema migration query session auth user account order cart payment invoice ' +
  'product search filter table form button modal menu layout header footer sidebar theme api request ' +
  'response stream buffer event emitter plugin adapter provider registry factory builder context state'
).split(' ');
/** [weight, extension, comment prefix] for text files. */
const TEXT_EXTS = [
  [30, 'ts', '//'],
  [10, 'tsx', '//'],
  [10, 'js', '//'],
  [9, 'py', '#'],
  [6, 'go', '//'],
  [6, 'json', ''],
  [6, 'md', '<!--'],
  [4, 'css', '/*'],
  [3, 'yml', '#'],
  [3, 'test.ts', '//'],
  [2, 'sh', '#'],
  [2, 'html', '<!--'],
  [2, 'snap', '//'],
  [2, 'txt', ''],
  [1, 'svg', '<!--'],
  [1, 'sql', '--'],
  [1, 'toml', '#'],
];
const BINARY_EXTS = ['png', 'png', 'png', 'jpg', 'woff2', 'ico', 'gif', 'pdf'];
const LARGE = [
  ['min.js', '//'],
  ['bundle.js', '//'],
  ['lock', '#'],
  ['fixture.json', ''],
  ['generated.ts', '//'],
  ['dump.sql', '--'],
];
const EMPTY_NAMES = ['__init__.py', '.gitkeep', 'py.typed', '.nojekyll', 'empty.txt'];
const EMPTY_DIR_NAMES = ['tmp', 'out', '.cache', 'logs', 'empty', 'reserved'];

// ---------------------------------------------------------------------------------------------------------
// Content pools, built once from a fixed seed: 4 MiB of code-like text, 4 MiB of random bytes.

const IDENTS = FILE_WORDS.concat(
  'id name value data item items result err ctx opts props key count'.split(' '),
);

function textPool(bytes) {
  const rng = new Rng('verify-text-pool-v1');
  const id = () => rng.pick(IDENTS);
  const Id = () => {
    const s = id();
    return s[0].toUpperCase() + s.slice(1);
  };
  const lines = [];
  let size = 0;
  while (size < bytes) {
    const indent = ' '.repeat(rng.pick([0, 2, 2, 4, 4, 4, 6, 8]));
    const line =
      indent +
      rng.weighted([
        [10, () => `const ${id()} = ${id()}.${id()}(${id()}, ${rng.int(0, 999)});`],
        [8, () => `if (!${id()}.${id()}) return ${id()};`],
        [6, () => `export function ${id()}${Id()}(${id()}: ${Id()}, ${id()}?: ${Id()}): ${Id()} {`],
        [6, () => '}'],
        [4, () => ''],
        [5, () => `// ${id()} the ${id()} before ${id()}ing the ${id()} (see ${Id()}${Id()})`],
        [4, () => `import { ${Id()}, ${id()}${Id()} } from './${id()}/${id()}.js';`],
        [4, () => `await this.${id()}.${id()}({ ${id()}, ${id()}: ${rng.int(0, 99)} });`],
        [3, () => `for (const ${id()} of ${id()}.${id()}) ${id()}.push(${id()});`],
        [3, () => `throw new ${Id()}Error(\`${id()} \${${id()}} not found in ${id()}\`);`],
        [2, () => `"${id()}": "${rng.hex(rng.int(6, 40))}",`],
      ])();
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8');
}

function binaryPool(bytes) {
  const rng = new Rng('verify-binary-pool-v1');
  const pool = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i += 4) pool.writeUInt32LE(Math.floor(rng.next() * 2 ** 32), i);
  return pool;
}

// ---------------------------------------------------------------------------------------------------------
// The plan: directories and what goes in each, decided before anything is written.

function uniqueName(taken, base, ext = '') {
  let name = ext ? `${base}.${ext}` : base;
  for (let n = 2; taken.has(name); n++) name = ext ? `${base}-${n}.${ext}` : `${base}-${n}`;
  taken.add(name);
  return name;
}

function plan(rng, fileCount) {
  const root = { rel: '', depth: 0, parent: undefined, names: new Set(), files: [], children: [] };
  const dirs = [root];
  const files = [];
  const newDir = (parent, name) => {
    const dir = {
      rel: parent.rel ? `${parent.rel}/${name}` : name,
      depth: parent.depth + 1,
      parent,
      names: new Set(),
      files: [],
      children: [],
    };
    parent.children.push(dir);
    dirs.push(dir);
    return dir;
  };
  const addFiles = (dir, count) => {
    for (let i = 0; i < count && files.length < fileCount; i++) {
      const kind = rng.weighted([
        [95.8, 'text'],
        [3, 'binary'],
        [1, 'empty'],
        [0.2, 'large'],
      ]);
      let name;
      let size;
      let comment = '';
      if (kind === 'empty') {
        name = uniqueName(dir.names, rng.pick(EMPTY_NAMES));
        size = 0;
      } else if (kind === 'binary') {
        name = uniqueName(dir.names, rng.pick(FILE_WORDS), rng.pick(BINARY_EXTS));
        size = Math.max(64, Math.min(512 * KiB, Math.round(rng.logNormal(6 * KiB, 1.2))));
      } else if (kind === 'large') {
        const [ext, prefix] = rng.pick(LARGE);
        name = uniqueName(dir.names, rng.pick(FILE_WORDS), ext);
        size = rng.int(150 * KiB, MiB);
        comment = prefix;
      } else {
        const [, ext, prefix] = rng.weighted(TEXT_EXTS.map((e) => [e[0], e]));
        name = uniqueName(dir.names, rng.pick(FILE_WORDS), ext);
        size = Math.max(1, Math.min(256 * KiB, Math.round(rng.logNormal(3 * KiB, 1.0))));
        comment = prefix;
      }
      const file = { dir, name, kind, size, comment, index: files.length };
      dir.files.push(file);
      files.push(file);
    }
  };
  // The root holds the usual handful of files; top-level directories come first.
  addFiles(root, 8);
  for (const word of ['src', 'test', 'docs', 'packages', 'scripts'])
    newDir(root, uniqueName(root.names, word));
  while (files.length < fileCount) {
    // A random directory as parent favours the older, shallower ones; one at the maximum depth hands the new
    // directory to one of its ancestors, so the tree is bushy and at most MAX_DEPTH deep.
    let parent = rng.pick(dirs);
    while (parent.depth >= MAX_DEPTH) parent = parent.parent;
    while (parent.depth >= 2 && rng.chance(0.3)) parent = parent.parent;
    const dir = newDir(parent, uniqueName(parent.names, rng.pick(DIR_WORDS)));
    // About one directory in eight only holds directories (or ends up empty if none lands in it).
    if (!rng.chance(0.12)) addFiles(dir, rng.int(10, 30));
  }
  return { root, dirs, files };
}

// ---------------------------------------------------------------------------------------------------------

/** Every git command of the benchmark: no user or system config (no fsmonitor, hooks, …), fixed identity. */
export function gitEnv() {
  return {
    ...process.env,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Bench Author',
    GIT_AUTHOR_EMAIL: 'bench@example.invalid',
    GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
    GIT_COMMITTER_NAME: 'Bench Author',
    GIT_COMMITTER_EMAIL: 'bench@example.invalid',
    GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
    LC_ALL: 'C',
  };
}

function git(dir, args) {
  return execFileSync('git', args, { cwd: dir, env: gitEnv(), encoding: 'utf8', maxBuffer: 64 * MiB });
}

function dirBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) total += statSync(join(entry.parentPath ?? entry.path, entry.name)).size;
  return total;
}

export function generate({ dir, files: fileCount, seed = '1' }) {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} exists and is not empty`);
  const rng = new Rng(`verify/${seed}`);
  const layout = plan(rng.fork('layout'), fileCount);
  const text = textPool(4 * MiB);
  const binary = binaryPool(4 * MiB);
  const content = rng.fork('content');
  const times = rng.fork('times');
  const year2023 = Date.UTC(2023, 0, 1) / 1000;
  const someTime = () => year2023 + times.int(0, 365 * 86400 - 1);

  mkdirSync(dir, { recursive: true });
  let bytes = 0;
  let largestFile = 0;
  const counts = { text: 0, binary: 0, empty: 0, large: 0 };
  for (const d of layout.dirs) if (d.rel) mkdirSync(join(dir, d.rel));
  for (const f of layout.files) {
    const rel = f.dir.rel ? `${f.dir.rel}/${f.name}` : f.name;
    let data;
    if (f.kind === 'empty') data = Buffer.alloc(0);
    else if (f.kind === 'binary') {
      // A fixed-looking header then random bytes: no two assets alike.
      const header = Buffer.from(`BIN${f.index}:${rel}\0`);
      const start = content.int(0, binary.length - f.size);
      data = Buffer.concat([header, binary.subarray(start, start + f.size)]).subarray(0, f.size);
    } else {
      const header = Buffer.from(`${f.comment} ${rel} (#${f.index})\n`);
      const start = content.int(0, text.length - f.size);
      data = Buffer.concat([header, text.subarray(start, start + f.size)]).subarray(0, f.size);
    }
    writeFileSync(join(dir, rel), data);
    bytes += f.size;
    largestFile = Math.max(largestFile, f.size);
    counts[f.kind]++;
  }

  // Symlinks: to files elsewhere in the tree (relative), to directories that are not ancestors, one dangling.
  const links = rng.fork('links');
  const symlinks = { file: 0, directory: 0, dangling: 0 };
  const regular = layout.files.filter((f) => f.kind !== 'empty');
  const linkPaths = [];
  const fileLinks = Math.max(1, Math.round(fileCount * 0.0025));
  for (let i = 0; i < fileLinks; i++) {
    const from = links.pick(layout.dirs);
    const to = links.pick(regular);
    const target = relative(join(dir, from.rel), join(dir, to.dir.rel, to.name));
    const name = uniqueName(
      from.names,
      `${to.name.split('.')[0]}-link`,
      to.name.split('.').slice(1).join('.'),
    );
    symlinkSync(target, join(dir, from.rel, name));
    linkPaths.push(join(dir, from.rel, name));
    symlinks.file++;
  }
  const dirLinks = Math.max(1, Math.round(fileCount / 2000));
  for (let i = 0; i < dirLinks; i++) {
    const from = links.pick(layout.dirs);
    let to = links.pick(layout.dirs);
    // Not the directory itself nor one of its ancestors (a loop for anything that follows links).
    while (to.depth === 0 || from.rel === to.rel || from.rel.startsWith(`${to.rel}/`))
      to = links.pick(layout.dirs);
    const name = uniqueName(from.names, `${to.rel.split('/').pop()}-shared`);
    symlinkSync(relative(join(dir, from.rel), join(dir, to.rel)), join(dir, from.rel, name));
    linkPaths.push(join(dir, from.rel, name));
    symlinks.directory++;
  }
  const dangling = links.pick(layout.dirs);
  const danglingName = uniqueName(dangling.names, 'previous-build');
  symlinkSync('../build/out/previous', join(dir, dangling.rel, danglingName));
  linkPaths.push(join(dir, dangling.rel, danglingName));
  symlinks.dangling++;

  // Extra empty directories (git does not track them, the checker sees them).
  const empties = rng.fork('empty-dirs');
  let extraEmpty = 0;
  for (const d of layout.dirs) {
    if (d.rel && empties.chance(0.01)) {
      mkdirSync(join(dir, d.rel, uniqueName(d.names, empties.pick(EMPTY_DIR_NAMES))));
      extraEmpty++;
    }
  }
  // With the directories the layout left with nothing in them.
  const emptyDirs =
    extraEmpty + layout.dirs.filter((d) => d.files.length === 0 && d.children.length === 0).length;

  // Fixed times: files and links first, then directories deepest first (writing into one changes its mtime).
  for (const f of layout.files) {
    const t = someTime();
    utimesSync(join(dir, f.dir.rel, f.name), t, t);
  }
  for (const link of linkPaths) {
    const t = someTime();
    lutimesSync(link, t, t);
  }
  const byDepth = [...layout.dirs].sort((a, b) => b.depth - a.depth);
  for (const d of byDepth) {
    const t = someTime();
    utimesSync(join(dir, d.rel), t, t);
  }

  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['add', '-A']);
  // gc.auto=0: a commit of thousands of loose objects would otherwise start a `git gc --auto` in the background.
  git(dir, ['-c', 'gc.auto=0', 'commit', '-q', '-m', `bench tree: ${fileCount} files, seed ${seed}`]);
  git(dir, ['-c', 'gc.auto=0', 'repack', '-a', '-d', '-q', '--window=0']);
  git(dir, ['prune-packed', '-q']);
  const status = git(dir, ['status', '--porcelain']);
  if (status.trim()) throw new Error(`git status is not clean after the commit:\n${status.slice(0, 2000)}`);
  execFileSync('sync');

  const perDir = layout.dirs
    .map((d) => d.files.length)
    .filter((n) => n > 0)
    .sort((a, b) => a - b);
  return {
    files: layout.files.length,
    bytes,
    largestFile,
    kinds: counts,
    // Not counting the root.
    dirs: layout.dirs.length - 1 + extraEmpty,
    emptyDirs,
    maxDepth: Math.max(...layout.dirs.map((d) => d.depth)),
    filesPerDir: { median: perDir[Math.floor(perDir.length / 2)], max: perDir[perDir.length - 1] },
    symlinks,
    gitBytes: dirBytes(join(dir, '.git')),
    commit: git(dir, ['rev-parse', 'HEAD']).trim(),
  };
}

// ---------------------------------------------------------------------------------------------------------

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      files: { type: 'string', default: '10000' },
      seed: { type: 'string', default: '1' },
    },
  });
  if (!values.dir) {
    process.stderr.write('usage: node bench/verify/generate.mjs --dir DIR [--files 10000] [--seed 1]\n');
    process.exit(2);
  }
  const started = performance.now();
  const result = generate({ dir: values.dir, files: Number(values.files), seed: values.seed });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
