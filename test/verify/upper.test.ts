import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CopyOnWrite, noOverlayEnv, probeView } from '../../src/verify/overlay.js';
import { readUpper } from '../../src/verify/upper.js';
import { tempDir } from '../helpers/cli.js';
import { isRoot } from '../helpers/unprivileged.js';

// An overlay's upper layer read back as changes: real upper directories with real whiteouts (character devices
// 0/0, which only root can make by hand) and real opaque directories (the trusted.overlay.opaque xattr, which
// only root can set), against a real lower directory.
const xattr = createRequire(import.meta.url)('@napi-rs/xattr') as {
  setAttributeSync(path: string, name: string, value: string): void;
  getAttributeSync(path: string, name: string): Buffer | null;
};

let dir: ReturnType<typeof tempDir>;
let lower: string;
let upper: string;

beforeEach(() => {
  dir = tempDir('replay-history-upper-');
  const base = realpathSync(dir.path);
  lower = join(base, 'lower');
  upper = join(base, 'upper');
  mkdirSync(join(lower, 'src'), { recursive: true });
  mkdirSync(join(lower, 'docs', 'old'), { recursive: true });
  writeFileSync(join(lower, 'README.md'), '# app\n');
  writeFileSync(join(lower, 'debug.log'), 'log\n');
  writeFileSync(join(lower, 'run.sh'), 'echo hi\n');
  writeFileSync(join(lower, 'src', 'app.js'), 'export const answer = 42;\n');
  writeFileSync(join(lower, 'src', 'util.js'), 'export {};\n');
  writeFileSync(join(lower, 'docs', 'guide.md'), 'guide\n');
  writeFileSync(join(lower, 'docs', 'old', 'v1.md'), 'v1\n');
  symlinkSync('README.md', join(lower, 'link'));
  mkdirSync(upper);
});
afterEach(() => dir.remove());

function whiteout(path: string): void {
  const made = spawnSync('mknod', [path, 'c', '0', '0']);
  if (made.status !== 0) throw new Error(`mknod: ${made.stderr}`);
}

const opaque = (path: string) => xattr.getAttributeSync(path, 'trusted.overlay.opaque')?.toString() === 'y';
const summary = (changes: { kind: string; path: string }[]) =>
  changes.map((change) => `${change.kind} ${change.path.slice(lower.length + 1) || '.'}`);

describe.runIf(isRoot)('reading an upper layer (as root)', () => {
  it('says what each kind of upper entry records: made, changed, deleted, replaced', () => {
    // As the kernel leaves them: a copied-up directory for each one the agent wrote in.
    mkdirSync(join(upper, 'src'));
    writeFileSync(join(upper, 'src', 'app.js'), 'export const answer = 41;\n'); // modified
    writeFileSync(join(upper, 'src', 'new.js'), 'new\n'); // created
    whiteout(join(upper, 'src', 'util.js')); // deleted
    whiteout(join(upper, 'debug.log')); // deleted
    writeFileSync(join(upper, 'run.sh'), 'echo hi\n');
    chmodSync(join(upper, 'run.sh'), 0o755); // mode changed (copied up whole: metacopy is off)
    chmodSync(join(lower, 'run.sh'), 0o644);
    symlinkSync('src/app.js', join(upper, 'link')); // retargeted
    mkdirSync(join(upper, 'build', 'out'), { recursive: true }); // a new tree
    writeFileSync(join(upper, 'build', 'out', 'app.min.js'), 'x');
    // docs removed and made again: opaque, everything the lower one held is gone but what is in the upper.
    mkdirSync(join(upper, 'docs'));
    xattr.setAttributeSync(join(upper, 'docs'), 'trusted.overlay.opaque', 'y');
    writeFileSync(join(upper, 'docs', 'guide.md'), 'guide\n'); // made again, same content: a new mtime

    const { changes, gaps } = readUpper(upper, lower, opaque);
    expect(gaps).toEqual([]);
    expect(summary(changes)).toEqual([
      'created build',
      'created build/out',
      'created build/out/app.min.js',
      'deleted debug.log',
      'modified docs/guide.md',
      'deleted docs/old',
      'deleted docs/old/v1.md',
      'link retargeted link',
      'mode changed run.sh',
      'modified src/app.js',
      'created src/new.js',
      'deleted src/util.js',
    ]);
    expect(changes.every((change) => change.layers.join() === 'overlay')).toBe(true);
    expect(changes.find((change) => change.path.endsWith('src/app.js'))?.detail).toBe(
      'content differs (26 → 26 bytes)',
    );
    expect(changes.find((change) => change.path.endsWith('run.sh'))?.detail).toBe('0644 → 0755');
    expect(changes.find((change) => change.path.endsWith('guide.md'))?.detail).toBe(
      'content identical; mtime changed',
    );
    expect(changes.find((change) => change.path.endsWith('link'))?.detail).toBe('README.md → src/app.js');
    expect(changes.find((change) => change.path.endsWith('debug.log'))?.type).toBe('file');
    // The real tree is read, never written.
    expect(readFileSync(join(lower, 'src', 'app.js'), 'utf8')).toBe('export const answer = 42;\n');
  });

  it('a directory that is not opaque keeps the lower entries it does not mention', () => {
    mkdirSync(join(upper, 'docs'));
    writeFileSync(join(upper, 'docs', 'extra.md'), 'more\n');
    expect(summary(readUpper(upper, lower, opaque).changes)).toEqual(['created docs/extra.md']);
  });

  it('below an opaque directory the lower layer is hidden all the way down', () => {
    mkdirSync(join(upper, 'docs', 'old'), { recursive: true });
    xattr.setAttributeSync(join(upper, 'docs'), 'trusted.overlay.opaque', 'y');
    expect(summary(readUpper(upper, lower, opaque).changes)).toEqual([
      'deleted docs/guide.md',
      'deleted docs/old/v1.md',
    ]);
  });

  it('a whiteout over a directory deletes everything below it; a file replaced by a directory changes type', () => {
    whiteout(join(upper, 'docs'));
    mkdirSync(join(upper, 'README.md'));
    xattr.setAttributeSync(join(upper, 'README.md'), 'trusted.overlay.opaque', 'y');
    writeFileSync(join(upper, 'README.md', 'index.md'), '# app\n');
    expect(summary(readUpper(upper, lower, opaque).changes)).toEqual([
      'type changed README.md',
      'created README.md/index.md',
      'deleted docs',
      'deleted docs/guide.md',
      'deleted docs/old',
      'deleted docs/old/v1.md',
    ]);
  });

  it('a whiteout for what another process removed from the real tree too is still the agent’s deletion', () => {
    whiteout(join(upper, 'gone.txt'));
    const [change] = readUpper(upper, lower, opaque).changes;
    expect(change).toMatchObject({ kind: 'deleted', type: 'unknown', path: join(lower, 'gone.txt') });
  });

  it('the root: its mode as the agent left it, against the real root when the view was made', () => {
    chmodSync(upper, 0o700);
    chmodSync(lower, 0o755);
    expect(summary(readUpper(upper, lower, opaque).changes)).toEqual(['mode changed .']);
  });

  it('an empty upper layer: nothing written', () => {
    chmodSync(upper, lstatSync(lower).mode & 0o7777);
    expect(readUpper(upper, lower, opaque).changes).toEqual([]);
  });
});

const available = probeView().probe.available;

describe.runIf(available)('the copy-on-write view (a real kernel overlay)', () => {
  it('an agent writes only to its layers; the real tree is untouched and its writes are read back', () => {
    const view = CopyOnWrite.open([lower]);
    if (!(view instanceof CopyOnWrite)) throw new Error(`no view: ${view.reason}`);
    try {
      const argv = view.wrap(
        [
          '/bin/sh',
          '-c',
          'echo changed > src/app.js && rm debug.log && rm -r docs && mkdir docs && touch new',
        ],
        'session-1',
        lower,
      );
      const ran = spawnSync(argv[0] as string, argv.slice(1), { cwd: lower, encoding: 'utf8' });
      expect(ran.stderr).toBe('');
      expect(ran.status).toBe(0);
      // Relative paths too went through the view (the script entered the cwd after mounting).
      expect(readFileSync(join(lower, 'src', 'app.js'), 'utf8')).toBe('export const answer = 42;\n');
      expect(existsSync(join(lower, 'debug.log'))).toBe(true);
      expect(existsSync(join(lower, 'docs', 'old', 'v1.md'))).toBe(true);
      expect(existsSync(join(lower, 'new'))).toBe(false);
      expect(summary(view.read().changes)).toEqual([
        'deleted debug.log',
        'deleted docs/guide.md',
        'deleted docs/old',
        'deleted docs/old/v1.md',
        'created new',
        'modified src/app.js',
      ]);
      expect(view.status()).toMatchObject({ method: 'kernel overlay', overlaid: [lower], sessions: 1 });
    } finally {
      view.close();
    }
    expect(existsSync(view.base)).toBe(false);
  });

  it('a later run of the same session sees its earlier writes; another session does not', () => {
    const view = CopyOnWrite.open([lower]);
    if (!(view instanceof CopyOnWrite)) throw new Error(`no view: ${view.reason}`);
    try {
      const sh = (session: string, script: string) => {
        const argv = view.wrap(['/bin/sh', '-c', script], session, lower);
        return spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8' });
      };
      expect(sh('a', 'echo one > note').status).toBe(0);
      expect(sh('a', 'cat note').stdout).toBe('one\n');
      expect(sh('b', 'cat note 2>/dev/null || echo none').stdout).toBe('none\n');
      const changes = view.read().changes;
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatchObject({
        kind: 'created',
        path: join(lower, 'note'),
        detail: 'by session a',
      });
    } finally {
      view.close();
    }
  });

  it('an opaque mark the agent sets itself (user.overlay.opaque through the view) hides nothing', () => {
    const view = CopyOnWrite.open([lower]);
    if (!(view instanceof CopyOnWrite)) throw new Error(`no view: ${view.reason}`);
    try {
      const module = createRequire(import.meta.url).resolve('@napi-rs/xattr');
      const set = `require(${JSON.stringify(module)}).setAttributeSync('docs', 'user.overlay.opaque', 'y')`;
      const argv = view.wrap([process.execPath, '-e', set], 'session-1', lower);
      const ran = spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8' });
      expect(ran.stderr).toBe('');
      expect(ran.status).toBe(0);
      // As root the kernel's mark is trusted.overlay.opaque, which the agent cannot set; docs kept its entries.
      expect(view.read().changes).toEqual([]);
    } finally {
      view.close();
    }
  });

  it('a directory holding the layers (the temp dir) is not overlaid, and says why', () => {
    const view = CopyOnWrite.open([lower, realpathSync('/tmp')]);
    if (!(view instanceof CopyOnWrite)) throw new Error(`no view: ${view.reason}`);
    try {
      expect(view.status().overlaid).toEqual([lower]);
      expect(view.status().notOverlaid).toEqual([
        { path: realpathSync('/tmp'), reason: expect.stringMatching(/holds the copy-on-write layers/) },
      ]);
    } finally {
      view.close();
    }
  });
});

describe('without a copy-on-write view', () => {
  it(`${noOverlayEnv}=1 turns it off, and says so`, () => {
    expect(probeView({ [noOverlayEnv]: '1' }).probe).toEqual({
      available: false,
      reason: `${noOverlayEnv} is set`,
    });
    const view = CopyOnWrite.open([lower], { [noOverlayEnv]: '1' });
    expect(view).toMatchObject({ method: 'none', reason: `${noOverlayEnv} is set`, overlaid: [] });
  });
});
