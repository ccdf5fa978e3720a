import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ran, ran, root, tempDir } from '../helpers/cli.js';

// The package as a user gets it: `npm pack`, then a real `npm ci` of the tarball into an empty project, then the
// installed `replay-history` run from its node_modules/.bin link. Three things differ from a user's install,
// each to keep the test near 20 s on a busy 2-core machine instead of 3.5 minutes:
// - The tarball is packed with --ignore-scripts: `npm test` has just built dist/, and the prepare script would
//   rebuild it while the other end-to-end files, running in parallel, spawn bin/ on it.
// - The project's lockfile is written from this repository's (same versions, each with its registry URL), so
//   npm takes every tarball from the cache `npm ci` filled here instead of asking the registry about each
//   package. opencode-linux-x64 (177 MB, the optional binary for --agent opencode) is left out, as on a
//   platform it does not install on: neither --version nor the demo runs opencode.
// - Install scripts are not run, and better-sqlite3's native module is the one this repository's own install
//   compiled for the same better-sqlite3 version and the same Node (compiling it again takes minutes here).
//   @parcel/watcher, the only other dependency with an install script, loads a prebuilt platform package and
//   builds nothing unless asked to build from source.

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};
const leftOut = 'opencode-linux-x64';

/** npm's own variables from an enclosing `npm test` would point the child npm at this repository. */
function npmEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^npm_(lifecycle_|package_|command$|config_local_prefix$|config_call$)/i.test(key)) continue;
    env[key] = value;
  }
  return env;
}

async function npm(args: string[], cwd: string): Promise<string> {
  const result = await execa('npm', args, { cwd, env: npmEnv(), extendEnv: false, reject: false });
  if (result.exitCode !== 0)
    throw new Error(`npm ${args.join(' ')} exited ${result.exitCode}:\n${result.stderr}\n${result.stdout}`);
  return result.stdout;
}

/** A lockfile for a project whose one dependency is the tarball, the rest as in this repository's lockfile. */
function lockfileFor(spec: string, registry: string): object {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version: string; name?: string; dev?: boolean; resolved?: string }>;
  };
  const { [leftOut]: _omitted, ...optional } = manifest.optionalDependencies ?? {};
  const packages: Record<string, object> = {
    '': { name: 'user-project', dependencies: { [manifest.name]: spec } },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: spec,
      license: manifest.license,
      dependencies: manifest.dependencies,
      optionalDependencies: optional,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (name === leftOut) continue;
    // This repository's lockfile omits registry URLs (omit-lockfile-registry-resolved); with the URL, npm
    // fetches by integrity from its cache and needs no package metadata.
    const file = `${name.split('/').pop()}-${entry.version}.tgz`;
    packages[path] = { ...entry, resolved: entry.resolved ?? `${registry}${name}/-/${file}` };
  }
  return { name: 'user-project', lockfileVersion: 3, requires: true, packages };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

let work: ReturnType<typeof tempDir>;
let tarball: string[];
let installed: string;
let home: string;
let temp: string;
let cwd: string;

/** The installed program, as a user with a fresh home, their own store set, in an empty directory, runs it. */
const replayHistory = (args: string[]): Promise<Ran> =>
  ran(
    execa(join(work.path, 'user', 'node_modules', '.bin', 'replay-history'), args, {
      cwd,
      reject: false,
      env: {
        NO_COLOR: '1',
        HOME: home,
        XDG_DATA_HOME: join(home, 'data'),
        XDG_CACHE_HOME: join(home, 'cache'),
        REPLAY_HISTORY_DB: join(home, 'mine.db'),
        TMPDIR: temp,
      },
    }),
  );

beforeAll(async () => {
  work = tempDir('replay-package-');
  const packed = JSON.parse(
    await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work.path], root),
  ) as { filename: string }[];
  const filename = packed[0]?.filename ?? '';
  // From the archive itself: npm's own listing masks names that look like ids (the sessions' UUIDs) as ***.
  const listed = await execa('tar', ['-tzf', join(work.path, filename)]);
  tarball = listed.stdout.split('\n').map((entry) => entry.replace(/^package\//, ''));

  const user = join(work.path, 'user');
  mkdirSync(user);
  const spec = `file:../${filename}`;
  const registry = (await npm(['config', 'get', 'registry'], user)).trim().replace(/\/?$/, '/');
  writeFileSync(
    join(user, 'package.json'),
    JSON.stringify({ name: 'user-project', private: true, dependencies: { [manifest.name]: spec } }),
  );
  writeFileSync(join(user, 'package-lock.json'), JSON.stringify(lockfileFor(spec, registry)));
  await npm(['ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], user);

  const sqlite = (base: string) => join(base, 'node_modules', 'better-sqlite3');
  const version = (base: string) =>
    (JSON.parse(readFileSync(join(sqlite(base), 'package.json'), 'utf8')) as { version: string }).version;
  expect(version(user)).toBe(version(root));
  const binding = join('build', 'Release', 'better_sqlite3.node');
  mkdirSync(join(sqlite(user), 'build', 'Release'), { recursive: true });
  copyFileSync(join(sqlite(root), binding), join(sqlite(user), binding));

  installed = join(user, 'node_modules', manifest.name);
  home = join(work.path, 'home');
  temp = join(work.path, 'tmp');
  cwd = join(work.path, 'cwd');
  for (const dir of [home, temp, cwd]) mkdirSync(dir);
}, 300_000);

afterAll(() => work?.remove());

describe('the npm package', () => {
  it('holds the licence, the program and the sample sessions, and no source maps or sources', () => {
    expect(tarball).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        'bin/replay-history.js',
        'dist/cli/main.js',
        // The CLI is bundled: the chunks it loads, and the licences of the npm packages whose code they hold.
        'dist/THIRD-PARTY-NOTICES.txt',
        // Codex 0.169's tool definitions ship in dist (replay/catalogue/codex-0.169.js): their licence with them.
        'licenses/openai-codex.Apache-2.0.txt',
        // Gemini CLI 0.61's tool definitions (replay/catalogue/gemini.js) likewise.
        'licenses/google-gemini-cli.Apache-2.0.txt',
        // Qwen Code 0.24.4's tool definitions (replay/catalogue/qwen.js) likewise.
        'licenses/qwen-code.Apache-2.0.txt',
      ]),
    );
    expect(tarball.filter((path) => path.startsWith('dist/chunks/')).length).toBeGreaterThan(5);
    const samples = filesUnder(join(root, 'sample-sessions')).map((path) => `sample-sessions/${path}`);
    expect(samples).toContain('sample-sessions/opencode/opencode.db');
    expect(tarball).toEqual(expect.arrayContaining(samples));
    expect(tarball.filter((path) => path.endsWith('.map'))).toEqual([]);
    expect(tarball.filter((path) => /^(src|test|bench)\//.test(path))).toEqual([]);

    const licence = readFileSync(join(installed, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the replay-history authors\n/);
    expect(manifest.license).toBe('MIT');
    // A map left out but still named at the end of a file would send a debugger after a missing file.
    const named = filesUnder(join(installed, 'dist')).filter((path) =>
      readFileSync(join(installed, 'dist', path), 'utf8').includes('sourceMappingURL'),
    );
    expect(named).toEqual([]);
  });

  it('installs a replay-history command that runs', async () => {
    const result = await replayHistory(['--version']);
    expect(result).toMatchObject({ exitCode: 0, stdout: manifest.version });
  });

  it('replay --demo replays the bundled samples into a store of its own, leaving the user’s alone', async () => {
    for (const attempt of [1, 2]) {
      // Twice: a second demo must work without --force (each gets a new directory).
      const result = await replayHistory(['replay', '--demo']);
      expect({ attempt, exitCode: result.exitCode, stderr: result.stderr }).toMatchObject({
        attempt,
        exitCode: 0,
      });
      expect(result.stdout).toMatch(/turns {7}30 done, 0 failed, over 6 session\(s\)/);
      expect(result.stdout).toContain('20 turn(s) exact, 0 normalized, 0 differ, 10 without calls');
      expect(result.stderr).toContain(`the sample sessions in ${join(installed, 'sample-sessions')}`);

      const store = /replayed into the store (\S+)/.exec(result.stderr)?.[1] ?? '';
      const pairsFile = /^pairs: (\S+)$/m.exec(result.stderr)?.[1] ?? '';
      expect(relative(temp, store)).toMatch(/^replay-history-demo-[^/]+\/replay\.db$/);
      expect(pairsFile).toBe(join(store, '..', 'pairs.jsonl'));
      const pairs = readFileSync(pairsFile, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { completion: unknown; original: unknown });
      expect(pairs).toHaveLength(30);
      for (const pair of pairs) expect(pair.completion).toEqual(pair.original);

      // The command the demo suggests works on the store it names.
      const sessions = await replayHistory(['sessions', '--db', store, '--json']);
      expect(sessions.exitCode).toBe(0);
      expect(sessions.stdout).toContain('6f1c2a34');
    }
    expect(readdirSync(temp)).toHaveLength(2);
    expect(existsSync(join(home, 'mine.db'))).toBe(false);
    expect(existsSync(join(home, 'data', 'replay-history'))).toBe(false);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('replay --demo refuses a store, targets or --all of the user’s (exit 2, nothing replayed)', async () => {
    const demos = readdirSync(temp).length;
    for (const args of [['--db', join(home, 'other.db')], ['6f1c2a34'], ['--all']]) {
      const result = await replayHistory(['replay', '--demo', ...args]);
      expect({ args, exitCode: result.exitCode }).toEqual({ args, exitCode: 2 });
      expect(result.stderr).toMatch(/^error: --demo /);
      expect(result.stdout).toBe('');
    }
    expect(existsSync(join(home, 'other.db'))).toBe(false);
    expect(readdirSync(temp)).toHaveLength(demos);
    expect(existsSync(join(home, 'mine.db'))).toBe(false);
  });
});
