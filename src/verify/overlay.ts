// The copy-on-write view an agent runs against: each checked directory with a kernel overlay mounted over it at
// its own path, in a private mount namespace made for the agent alone. The agent reads the real files and
// writes only to the overlay's upper layer, so nothing it does reaches the real tree, and the upper layer is the
// exact record of what it wrote (read by upper.ts). A change in the real tree meanwhile is then provably made by
// another process. Where no overlay can be made the agent runs on the real directories, as before, and the
// report says why.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leftByGone } from '../processes.js';
import { canonicalPath } from './check.js';
import type { Change } from './diff.js';
import { comparePaths, type Entry, entryOf } from './entry.js';
import { type OpaqueTest, readUpper } from './upper.js';

/** Set (to anything but 0) to run the agent on the real directories: the fallback, on purpose. */
export const noOverlayEnv = 'REPLAY_HISTORY_NO_OVERLAY';

/** How a view's namespace is made: as root, or in a user namespace of our own (an unprivileged user). */
interface Way {
  method: 'kernel overlay' | 'kernel overlay in a user namespace';
  /** unshare's options before the command. */
  unshare: string[];
  /** Mount options every view gets (after lowerdir, upperdir, workdir). */
  options: string;
  /**
   * The xattr that marks an opaque upper directory. Only the kernel's own name for this way is read: the agent
   * can set user.* attributes through the view, never trusted.* ones.
   */
  opaque: string;
}

/**
 * redirect_dir and metacopy off: a renamed directory is then copied, not redirected, and a chmod copies the whole
 * file, so every upper entry holds its full content and the upper layer reads as it stands (no lower path to
 * follow, no data kept below). In a user namespace the overlay keeps its attributes as user.overlay.* (userxattr),
 * which makes no redirects already and refuses redirect_dir as an option.
 */
const ways: Way[] = [
  {
    method: 'kernel overlay',
    unshare: ['--mount', '--propagation', 'private'],
    options: 'redirect_dir=off,metacopy=off',
    opaque: 'trusted.overlay.opaque',
  },
  {
    method: 'kernel overlay in a user namespace',
    unshare: ['--user', '--map-root-user', '--mount', '--propagation', 'private'],
    options: 'userxattr,metacopy=off',
    opaque: 'user.overlay.opaque',
  },
];

export type ViewProbe =
  | {
      available: true;
      method: Way['method'];
      way: Way;
      unshare: string;
      mount: string;
      sh: string;
      opaque: OpaqueTest;
    }
  | { available: false; reason: string };

/** Runs in the agent's new mount namespace: mounts each view, enters the cwd through them, becomes the agent. */
const mountScript = `
mount=$1; cwd=$2; n=$3; shift 3
while [ "$n" -gt 0 ]; do
  "$mount" -t overlay overlay -o "$1" "$2" || { echo "replay-history: cannot mount the copy-on-write view of $2" >&2; exit 125; }
  shift 2; n=$((n - 1))
done
cd "$cwd" || exit 125
exec "$@"
`;

function find(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const path = join(dir, name);
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // Not there.
    }
  }
  return undefined;
}

type ReadAttribute = (path: string, name: string) => Buffer | null;

/** Node has no xattr call: a small native module (prebuilt per platform) reads them. */
function attributeReader(): ReadAttribute {
  return (createRequire(import.meta.url)('@napi-rs/xattr') as { getAttributeSync: ReadAttribute })
    .getAttributeSync;
}

/** Whether an upper directory is opaque: `name` set to 'y' ('x' marks something else, not opacity). */
function opaqueTest(read: ReadAttribute, name: string): OpaqueTest {
  return (dir) => {
    try {
      return read(dir, name)?.toString() === 'y';
    } catch {
      // Gone or unreadable: nothing hidden that we can tell.
      return false;
    }
  };
}

/** The first line a failed command said, for a reason in the report. */
function said(result: ReturnType<typeof spawnSync>): string {
  const text = `${result.stderr ?? ''}`.trim().split('\n')[0];
  return text || result.error?.message || `exit ${result.status ?? result.signal}`;
}

/**
 * Makes a real view once in a scratch directory: mounts it, deletes a file, replaces a directory and writes a
 * file through it, and checks that the upper layer records all three (a whiteout, an opaque directory read back
 * through xattrs, the file) and that the lower one is untouched. Undefined when it works, else why not.
 */
function tryWay(
  way: Way,
  tools: { unshare: string; mount: string; sh: string },
  opaque: OpaqueTest,
): string | undefined {
  const scratch = mkdtempSync(join(tmpdir(), 'replay-history-probe-'));
  try {
    const lower = join(scratch, 'lower');
    mkdirSync(join(lower, 'replaced'), { recursive: true });
    writeFileSync(join(lower, 'deleted'), '');
    writeFileSync(join(lower, 'replaced', 'hidden'), '');
    const upper = join(scratch, 'upper');
    const work = join(scratch, 'work');
    mkdirSync(upper);
    mkdirSync(work);
    const result = spawnSync(
      tools.unshare,
      [
        ...way.unshare,
        '--',
        tools.sh,
        '-c',
        mountScript,
        'replay-history-view',
        tools.mount,
        lower,
        '1',
        `lowerdir=${lower},upperdir=${upper},workdir=${work},${way.options}`,
        lower,
        tools.sh,
        '-c',
        'rm deleted && rm -r replaced && mkdir replaced && echo written > written',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (result.status !== 0) return `refused: ${said(result)}`;
    const whiteout = lstatSync(join(upper, 'deleted'), { bigint: true, throwIfNoEntry: false });
    const recorded =
      whiteout?.isCharacterDevice() &&
      whiteout.rdev === 0n &&
      opaque(join(upper, 'replaced')) &&
      existsSync(join(upper, 'written')) &&
      existsSync(join(lower, 'deleted')) &&
      existsSync(join(lower, 'replaced', 'hidden')) &&
      !existsSync(join(lower, 'written'));
    return recorded ? undefined : 'it did not record writes as expected (whiteouts or opaque directories)';
  } finally {
    removeLayers(scratch);
  }
}

/** The first way that works here: as root, a namespace of its own; else (or refused) a user namespace. */
function probeKernel(): ViewProbe {
  if (process.platform !== 'linux') return { available: false, reason: 'overlays are a Linux feature' };
  const unshare = find('unshare');
  const mount = find('mount');
  const sh = find('sh');
  if (!unshare || !mount || !sh)
    return { available: false, reason: `${unshare ? (mount ? 'sh' : 'mount') : 'unshare'} is not installed` };
  let read: ReadAttribute;
  try {
    read = attributeReader();
  } catch (error) {
    return { available: false, reason: `cannot read overlay attributes: ${(error as Error).message}` };
  }
  const refused: string[] = [];
  for (const way of process.getuid?.() === 0 ? ways : ways.slice(1)) {
    const opaque = opaqueTest(read, way.opaque);
    const why = tryWay(way, { unshare, mount, sh }, opaque);
    if (!why) return { available: true, method: way.method, way, unshare, mount, sh, opaque };
    refused.push(`${way.method} ${why}`);
  }
  return { available: false, reason: refused.join('; ') };
}

/**
 * Removes a tree of layers. A work directory's own `work/` is left mode 000 by the kernel; its owner may remove
 * it only after giving itself access (root need not, an unprivileged user must).
 */
function removeLayers(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
    return;
  } catch {
    // Below: open up what the kernel closed, then again.
  }
  const open = (dir: string) => {
    let names: string[] = [];
    try {
      chmodSync(dir, 0o700);
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const child = join(dir, name);
      if (lstatSync(child, { throwIfNoEntry: false })?.isDirectory()) open(child);
    }
  };
  open(path);
  rmSync(path, { recursive: true, force: true });
}

let probed: { probe: ViewProbe; ms: number } | undefined;

/** What this machine allows, found once per process (REPLAY_HISTORY_NO_OVERLAY is read each time). */
export function probeView(env: NodeJS.ProcessEnv = process.env): { probe: ViewProbe; ms: number } {
  const off = env[noOverlayEnv];
  if (off && off !== '0') return { probe: { available: false, reason: `${noOverlayEnv} is set` }, ms: 0 };
  if (!probed) {
    const started = performance.now();
    const probe = probeKernel();
    probed = { probe, ms: performance.now() - started };
  }
  return probed;
}

/** What the report says about the view. */
export interface ViewStatus {
  /** How the view was made, or 'none' with the reason the agent runs on the real directories. */
  method: Way['method'] | 'none';
  reason?: string;
  /** The directories the agent saw copy-on-write. */
  overlaid: string[];
  /** Checked directories it saw as they are, each with why. */
  notOverlaid: { path: string; reason: string }[];
  /** Agent sessions that ran under the view. */
  sessions: number;
  /** The probe (once per process), and removing the layers at the end. */
  probeMs: number;
  teardownMs: number;
}

/** Characters that mount(8) and the overlay's option parser would split or unescape. */
const unsafe = /[,:\\"\n]/;

const prefix = 'replay-history-view-';

/** Layers of views whose replay was killed before removing them (its pid in the name, no longer running). */
function sweepStale(parent: string): void {
  for (const name of leftByGone(parent, new RegExp(`^${prefix}(\\d+)-`))) removeLayers(join(parent, name));
}

interface Layers {
  root: string;
  upper: string;
  work: string;
  /** The upper directory as made, with the root's path: what the agent saw of the root, until it changed it. */
  asMade: Entry;
}

/**
 * The views of one run. Each agent session gets its own upper layers (kept across its `opencode run`s, so a
 * later prompt sees what an earlier one wrote); `read` turns all of them into changes and `close` removes them.
 */
export class CopyOnWrite {
  private readonly sessions = new Map<string, Layers[]>();
  private teardownMs = 0;
  /** A run that ends without `close` (interrupted, failed to start) still removes its layers. */
  private readonly onExit = () => removeLayers(this.base);

  private constructor(
    private readonly probe: Extract<ViewProbe, { available: true }>,
    private readonly probeMs: number,
    /** Where the layers live; left out of the check (it may sit inside a watched directory). */
    readonly base: string,
    private readonly overlaid: string[],
    private readonly notOverlaid: { path: string; reason: string }[],
  ) {
    process.once('exit', this.onExit);
  }

  /**
   * The view over `roots` (canonical, not nested), or why there is none. A root the layers would sit inside
   * (a --watch of the temp dir), one that is not a directory, or one whose path the mount options cannot
   * carry is seen as it is and listed with the reason.
   */
  static open(roots: readonly string[], env: NodeJS.ProcessEnv = process.env): CopyOnWrite | ViewStatus {
    const { probe, ms } = probeView(env);
    const none = (reason: string): ViewStatus => ({
      method: 'none',
      reason,
      overlaid: [],
      notOverlaid: [],
      sessions: 0,
      probeMs: ms,
      teardownMs: 0,
    });
    if (!probe.available) return none(probe.reason);
    const parent = canonicalPath(tmpdir());
    sweepStale(parent);
    const overlaid: string[] = [];
    const notOverlaid: { path: string; reason: string }[] = [];
    for (const root of roots) {
      let reason: string | undefined;
      if (root === '/' || parent === root || parent.startsWith(`${root}/`))
        reason = `it holds the copy-on-write layers (${parent})`;
      else if (unsafe.test(root)) reason = 'its path has a character overlay mount options cannot carry';
      else if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) reason = 'not a directory';
      if (reason) notOverlaid.push({ path: root, reason });
      else overlaid.push(root);
    }
    if (overlaid.length === 0) {
      const status = none('no checked directory can be overlaid');
      status.notOverlaid = notOverlaid;
      return status;
    }
    const base = mkdtempSync(join(parent, `${prefix}${process.pid}-`));
    if (unsafe.test(base)) {
      rmSync(base, { recursive: true, force: true });
      return none(`the temp dir ${parent} has a character overlay mount options cannot carry`);
    }
    return new CopyOnWrite(probe, ms, base, overlaid, notOverlaid);
  }

  private layersOf(session: string): Layers[] {
    const known = this.sessions.get(session);
    if (known) return known;
    const dir = join(this.base, String(this.sessions.size + 1));
    const layers = this.overlaid.map((root, index) => {
      const upper = join(dir, String(index), 'upper');
      const work = join(dir, String(index), 'work');
      mkdirSync(upper, { recursive: true });
      mkdirSync(work);
      // The upper directory is the view's root: it must look like the real one (mode, owner, times).
      const stats = lstatSync(root, { bigint: true });
      try {
        chownSync(upper, Number(stats.uid), Number(stats.gid));
      } catch {
        // Not ours to give (an unprivileged user, a root owned by another): the agent sees it as ours.
      }
      // After chown, which clears the setgid bit.
      chmodSync(upper, Number(stats.mode & 0o7777n));
      utimesSync(upper, Number(stats.atimeNs) / 1e9, Number(stats.mtimeNs) / 1e9);
      // What the agent saw of the root is this directory: its changes are measured against it as made.
      return { root, upper, work, asMade: entryOf(root, lstatSync(upper, { bigint: true })) };
    });
    this.sessions.set(session, layers);
    return layers;
  }

  /** The argv that runs `argv` in `cwd` with every view mounted, for `session`. */
  wrap(argv: readonly string[], session: string, cwd: string): string[] {
    const layers = this.layersOf(session);
    const { unshare, sh, mount, way } = this.probe;
    const mounts = layers.flatMap((layer) => [
      `lowerdir=${layer.root},upperdir=${layer.upper},workdir=${layer.work},${this.probe.way.options}`,
      layer.root,
    ]);
    return [
      unshare,
      ...way.unshare,
      '--',
      sh,
      '-c',
      mountScript,
      'replay-history-view',
      mount,
      cwd,
      String(layers.length),
      ...mounts,
      ...argv,
    ];
  }

  /** Every session's writes, as changes of the real paths, with what could not be read. */
  read(): { changes: Change[]; gaps: { path: string; reason: string }[] } {
    const changes: Change[] = [];
    const gaps: { path: string; reason: string }[] = [];
    for (const [session, layers] of this.sessions) {
      for (const layer of layers) {
        const read = readUpper(layer.upper, layer.root, this.probe.opaque, layer.asMade);
        gaps.push(...read.gaps);
        // Each session saw the real files, not another's writes: with several, each change says whose it is.
        for (const change of read.changes)
          changes.push(this.sessions.size > 1 ? { ...change, detail: withSession(change, session) } : change);
      }
    }
    return { changes: changes.sort((a, b) => comparePaths(a.path, b.path)), gaps };
  }

  /** Removes every layer (the namespaces that mounted them are gone with their processes). */
  close(): void {
    const started = performance.now();
    removeLayers(this.base);
    process.off('exit', this.onExit);
    this.teardownMs += performance.now() - started;
  }

  status(): ViewStatus {
    return {
      method: this.probe.method,
      overlaid: this.overlaid,
      notOverlaid: this.notOverlaid,
      sessions: this.sessions.size,
      probeMs: this.probeMs,
      teardownMs: this.teardownMs,
    };
  }
}

function withSession(change: Change, session: string): string {
  const by = `by session ${session.slice(0, 12)}`;
  return change.detail ? `${change.detail}; ${by}` : by;
}
