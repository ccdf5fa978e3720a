// What the side-effect checker judges around a replay: not the whole machine. A session recorded in the temp
// dir, the home directory or / is not walked (a --watch of it still is); and an agent run against a
// copy-on-write view is judged by what it wrote there, while what other processes write to the real
// workspace meanwhile is said and not counted. The temp dir and home here are test directories handed to the
// child as TMPDIR and HOME: the real /tmp is never walked.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noOverlayEnv, probeView } from '../../src/verify/overlay.js';
import { root, run, tempDir } from '../helpers/cli.js';
import { startModelServer } from '../helpers/model-server.js';
import { opencodeBinary } from '../helpers/opencode.js';
import { writeTranscript } from '../helpers/transcript.js';
import { isRoot } from '../helpers/unprivileged.js';

let dir: ReturnType<typeof tempDir>;
let base: string;
let temp: string;
let home: string;
let env: Record<string, string>;

beforeAll(() => {
  dir = tempDir('replay-history-scope-');
  base = realpathSync(dir.path);
  temp = join(base, 'tmp');
  home = join(base, 'home', 'ada');
  mkdirSync(join(temp, 'project'), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(temp, 'other-program.log'), 'not ours\n');
  // The store and the hash cache live outside both, as a user's would not necessarily: they are excluded anyway.
  env = { TMPDIR: temp, HOME: home, XDG_CACHE_HOME: join(base, 'cache'), XDG_DATA_HOME: join(base, 'data') };
});
afterAll(() => dir?.remove());

interface SideEffects {
  checked: boolean;
  roots: string[];
  skippedCwds: { cwd: string; reason: string }[];
  changes: { kind: string; path: string; layers: string[] }[];
  otherChanges: { kind: string; path: string; layers: string[] }[];
  copyOnWrite: { method: string; reason?: string; overlaid: string[]; sessions: number } | null;
}

/** A one-turn Claude Code session recorded in `cwd`, in its own logs directory. */
function sessionIn(name: string, cwd: string): string {
  const logs = join(base, 'logs', name);
  mkdirSync(logs, { recursive: true });
  writeTranscript(join(logs, 'session.jsonl'), {
    sessionId: `a1b2c3d4-0000-4000-8000-${String(Math.abs(hash(name)))
      .padStart(12, '0')
      .slice(0, 12)}`,
    cwd,
    prompt: 'What is here?',
    steps: [],
    answer: 'Nothing much.',
  });
  return logs;
}

function hash(text: string): number {
  let h = 0;
  for (const c of text) h = (h * 31 + c.charCodeAt(0)) | 0;
  return h;
}

/** Replays `logs` against a model server that, as another program would, writes into `into` while it answers. */
async function replayWhileWriting(name: string, logs: string, into: string, extra: string[] = []) {
  const server = await startModelServer({
    responders: [
      () => {
        writeFileSync(join(into, `${name}.txt`), 'written by another program during the replay\n');
        return { text: 'done' };
      },
    ],
  });
  try {
    return await run(
      [
        'replay',
        logs,
        '--db',
        join(base, `${name}.db`),
        '--model',
        'openai:qwen',
        '--base-url',
        server.baseURL,
        '--out',
        join(base, `${name}.jsonl`),
        '--force',
        '--json',
        ...extra,
      ],
      { env },
    );
  } finally {
    await server.close();
  }
}

describe('recorded cwds too broad to walk', () => {
  it('a session recorded in the temp dir: not walked, said on stderr and in --json; a write there is not a side effect', async () => {
    const result = await replayWhileWriting('in-temp', sessionIn('in-temp', temp), temp);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(
      `not checking ${temp}, where a session was recorded: it is the temp directory`,
    );
    expect(result.stderr).toContain(`--watch ${temp} checks it anyway`);
    const effects = (JSON.parse(result.stdout) as { sideEffects: SideEffects }).sideEffects;
    expect(effects.skippedCwds).toEqual([{ cwd: temp, reason: 'the temp directory' }]);
    expect(effects).toMatchObject({ checked: false, roots: [], changes: [] });
    // The builtin driver spawns no agent: no view to speak of.
    expect(effects.copyOnWrite).toBeNull();
    expect(existsSync(join(temp, 'in-temp.txt'))).toBe(true);
  });

  it('--watch of the temp dir checks it anyway: the same write is then caught (exit 3)', async () => {
    const result = await replayWhileWriting('watched-temp', sessionIn('watched-temp', temp), temp, [
      '--watch',
      temp,
    ]);
    expect(result.exitCode).toBe(3);
    const effects = (JSON.parse(result.stdout) as { sideEffects: SideEffects }).sideEffects;
    expect(effects.roots).toEqual([temp]);
    expect(effects.skippedCwds).toEqual([{ cwd: temp, reason: 'the temp directory' }]);
    expect(effects.changes).toContainEqual(
      expect.objectContaining({ kind: 'created', path: join(temp, 'watched-temp.txt') }),
    );
  });

  it('the home directory and a directory above it are skipped; a project below the temp dir is checked', async () => {
    const project = join(temp, 'project');
    for (const [name, cwd, reason] of [
      ['in-home', home, 'the home directory'],
      ['above-home', join(base, 'home'), `above the home directory (${home})`],
    ] as const) {
      const result = await replayWhileWriting(name, sessionIn(name, cwd), home);
      expect(result.exitCode).toBe(0);
      const effects = (JSON.parse(result.stdout) as { sideEffects: SideEffects }).sideEffects;
      expect(effects.skippedCwds).toEqual([{ cwd, reason }]);
      expect(effects.checked).toBe(false);
    }
    const checked = await replayWhileWriting('in-project', sessionIn('in-project', project), project);
    expect(checked.exitCode).toBe(3);
    const effects = (JSON.parse(checked.stdout) as { sideEffects: SideEffects }).sideEffects;
    expect(effects).toMatchObject({ checked: true, roots: [project], skippedCwds: [] });
    expect(effects.changes).toContainEqual(
      expect.objectContaining({ kind: 'created', path: join(project, 'in-project.txt') }),
    );
  });

  it('the human report says which recorded cwds were not checked and why', async () => {
    const logs = sessionIn('human', temp);
    const result = await run(
      ['replay', logs, '--db', join(base, 'human.db'), '--out', join(base, 'human.jsonl')],
      {
        env,
      },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('side effects not checked: no directory to watch (add --watch DIR)');
    expect(result.stdout).toContain(
      `too broad to walk, not checked (--watch DIR checks one anyway): ${temp} (the temp directory)`,
    );
  });
});

// The agent driver: the real opencode binary, its model the session's own recorded turns (no server), the
// sample's subagent session (two turns, one opencode process) in a workspace made here.
const viewAvailable = probeView().probe.available;
let opencodeDb: string;
let sessionId: string;

let agentBinary: string | undefined;

/**
 * The opencode the replays run: the real one, after running `<ws>.before` (a script beside the workspace) when
 * it runs in that workspace. That is the agent itself, so what the script writes is the replay's. Not elsewhere:
 * the replay also runs it once to ask which tools it offers (cached per binary: one wrapper for every test).
 */
function wrapper(ws: string, before: string): string {
  writeFileSync(`${ws}.before`, `${before}\n`);
  if (agentBinary) return agentBinary;
  agentBinary = join(base, 'opencode-wrapper');
  writeFileSync(
    agentBinary,
    // `run` or `serve`: whichever way the driver starts opencode.
    `#!/bin/sh\ncase "$1" in run|serve) if [ -f "$PWD.before" ]; then . "$PWD.before"; fi;; esac\nexec ${opencodeBinary()} "$@"\n`,
  );
  chmodSync(agentBinary, 0o755);
  return agentBinary;
}

function workspace(name: string): string {
  const path = join(base, 'workspaces', name);
  mkdirSync(join(path, 'src'), { recursive: true });
  writeFileSync(
    join(path, 'src', 'todos.js'),
    'function list(limit) {\n  return todos.slice(0, limit - 1);\n}\n',
  );
  writeFileSync(join(path, 'debug.log'), 'list(5) -> 4 items\n');
  return path;
}

const listing = (path: string) =>
  spawnSync('find', [path, '-printf', '%P %s %T@\\n'], { encoding: 'utf8' }).stdout.split('\n').sort();

async function replayAgent(
  ws: string,
  opencode: string,
  options: { env?: Record<string, string>; args?: string[]; human?: boolean } = {},
) {
  const result = await run(
    [
      'replay',
      sessionId,
      '--db',
      opencodeDb,
      '--agent',
      'opencode',
      '--workspace',
      ws,
      '--out',
      join(base, `${basename(ws)}.jsonl`),
      '--opencode-bin',
      opencode,
      ...(options.human ? [] : ['--json']),
      ...(options.args ?? []),
    ],
    { env: { ...env, ...options.env } },
  );
  const effects = result.stdout.startsWith('{')
    ? (JSON.parse(result.stdout) as { sideEffects: SideEffects }).sideEffects
    : undefined;
  return { result, effects };
}

/**
 * A replay during which the test, another process, writes into the real workspace: the agent (its first run)
 * waits at its start until the test has written, then goes on. `agent` is what the agent itself does then.
 */
async function replayWhileAnotherWrites(name: string, agent: string, args: string[] = []) {
  const ws = workspace(name);
  const started = join(base, `${name}-agent-started`);
  const written = join(base, `${name}-other-wrote`);
  const opencode = wrapper(
    ws,
    `if [ ! -e ${written} ]; then touch ${started}; while [ ! -e ${written} ]; do sleep 0.1; done; ${agent}; fi`,
  );
  const replaying = replayAgent(ws, opencode, { args });
  while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 100));
  writeFileSync(join(ws, 'from-another-process.txt'), 'not the replay\n');
  writeFileSync(join(ws, 'debug.log'), 'rewritten by another process\n');
  writeFileSync(written, '');
  return { ws, ...(await replaying) };
}

const bwrapWorks = spawnSync('bwrap', ['--bind', '/', '/', '--die-with-parent', 'true']).status === 0;

describe('an agent replay judged by what the agent wrote', () => {
  beforeAll(async () => {
    opencodeDb = join(base, 'opencode.db');
    const ingest = await run(['ingest', join(root, 'sample-sessions', 'opencode'), '--db', opencodeDb]);
    expect(ingest.exitCode).toBe(0);
    const listed = JSON.parse((await run(['sessions', '--db', opencodeDb, '--json'])).stdout) as {
      id: string;
      title: string;
    }[];
    sessionId = listed.find((s) => s.title.startsWith('Check limit tests'))?.id ?? '';
    expect(sessionId).not.toBe('');
  });

  it.runIf(viewAvailable)(
    'a write by the agent is caught from the view’s upper layer (exit 3, the file named), the real workspace untouched',
    async () => {
      const ws = workspace('intruder');
      const intruder = wrapper(ws, 'echo intruder > "$PWD/intruder.txt"; rm -f debug.log');
      const before = listing(ws);
      const { result, effects } = await replayAgent(ws, intruder);
      expect(result.exitCode).toBe(3);
      expect(effects?.copyOnWrite).toMatchObject({ method: 'kernel overlay', overlaid: [ws], sessions: 1 });
      expect(effects?.changes).toEqual([
        expect.objectContaining({ kind: 'deleted', path: join(ws, 'debug.log'), layers: ['overlay'] }),
        expect.objectContaining({ kind: 'created', path: join(ws, 'intruder.txt'), layers: ['overlay'] }),
      ]);
      expect(effects?.otherChanges).toEqual([]);
      expect(listing(ws)).toEqual(before);
    },
    180_000,
  );

  it.runIf(viewAvailable)(
    'a write into the real workspace by another process during the replay is said, not counted: exit 0',
    async () => {
      const { ws, result, effects } = await replayWhileAnotherWrites('other', 'true');
      expect(result.exitCode).toBe(0);
      expect(effects?.changes).toEqual([]);
      expect(effects?.otherChanges).toEqual([
        expect.objectContaining({ kind: 'modified', path: join(ws, 'debug.log') }),
        expect.objectContaining({ kind: 'created', path: join(ws, 'from-another-process.txt') }),
      ]);
      expect(readFileSync(join(ws, 'from-another-process.txt'), 'utf8')).toBe('not the replay\n');
    },
    180_000,
  );

  it.runIf(viewAvailable)(
    'both at once: the agent’s write counts (exit 3), the other process’s is said apart',
    async () => {
      const { ws, result, effects } = await replayWhileAnotherWrites('both', 'echo agent > agent.txt');
      expect(result.exitCode).toBe(3);
      expect(effects?.changes).toEqual([
        expect.objectContaining({ kind: 'created', path: join(ws, 'agent.txt'), layers: ['overlay'] }),
      ]);
      expect(effects?.otherChanges.map((change) => change.path)).toEqual([
        join(ws, 'debug.log'),
        join(ws, 'from-another-process.txt'),
      ]);
      expect(existsSync(join(ws, 'agent.txt'))).toBe(false);
    },
    180_000,
  );

  it.runIf(bwrapWorks)(
    '--sandbox instead of the view: the agent’s write is refused, and the other process’s is not counted',
    async () => {
      const { ws, result, effects } = await replayWhileAnotherWrites(
        'sandboxed',
        'echo agent > agent.txt 2>/dev/null || true',
        ['--sandbox'],
      );
      expect(result.exitCode).toBe(0);
      expect(effects?.copyOnWrite).toMatchObject({
        method: 'none',
        reason: '--sandbox: the checked directories are read-only to the agent',
      });
      expect(effects?.changes).toEqual([]);
      expect(effects?.otherChanges).toHaveLength(2);
      expect(existsSync(join(ws, 'agent.txt'))).toBe(false);
    },
    180_000,
  );

  it(`without a view (${noOverlayEnv}=1, as where none can be made) the real workspace is checked, as before, and said so`, async () => {
    const ws = workspace('fallback');
    const intruder = wrapper(ws, 'echo intruder > "$PWD/intruder.txt"');
    const { result } = await replayAgent(ws, intruder, { env: { [noOverlayEnv]: '1' }, human: true });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(/side effects 1 change under .*:\n {2}created {2}intruder\.txt · manifest/);
    expect(result.stdout).toContain(
      `copy-on-write view not available: ${noOverlayEnv} is set, checking the real workspace`,
    );
    // Nothing stood between the agent and the real files.
    expect(readFileSync(join(ws, 'intruder.txt'), 'utf8')).toBe('intruder\n');
  });
});

// As an unprivileged user the view is made in a user namespace of its own (overlay attributes as user.*). The
// built module is run as `nobody` on a directory it owns, as a user's replay would run it on their workspace.
const nobody = 65534;
const userNamespaces =
  isRoot &&
  spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'true'], { uid: nobody, gid: nobody })
    .status === 0;

describe.runIf(userNamespaces)('the copy-on-write view for an unprivileged user', () => {
  it('is a kernel overlay in a user namespace: the writes are read back, the real tree untouched', () => {
    const own = join(base, 'nobody');
    const lower = join(own, 'workspace');
    mkdirSync(join(lower, 'docs'), { recursive: true });
    writeFileSync(join(lower, 'notes.txt'), 'keep\n');
    writeFileSync(join(lower, 'docs', 'guide.md'), 'guide\n');
    mkdirSync(join(own, 'tmp'));
    spawnSync('chown', ['-R', `${nobody}:${nobody}`, own]);
    chmodSync(base, 0o755);
    const script = `
      import { spawnSync } from 'node:child_process';
      import { existsSync } from 'node:fs';
      const { CopyOnWrite } = await import(${JSON.stringify(join(root, 'dist', 'verify', 'overlay.js'))});
      const view = CopyOnWrite.open([${JSON.stringify(lower)}]);
      if (!(view instanceof CopyOnWrite)) { console.log(JSON.stringify({ none: view })); process.exit(0); }
      const argv = view.wrap(['/bin/sh', '-c', 'echo new > new.txt && rm notes.txt && rm -r docs && mkdir docs'], 's', ${JSON.stringify(lower)});
      const ran = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8' });
      const read = view.read();
      view.close();
      console.log(JSON.stringify({ status: view.status(), ran: ran.status, stderr: ran.stderr, read, left: existsSync(view.base) }));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      uid: nobody,
      gid: nobody,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: join(own, 'tmp'), HOME: own },
    });
    expect(child.stderr).toBe('');
    const out = JSON.parse(child.stdout) as {
      status: { method: string; overlaid: string[] };
      ran: number;
      stderr: string;
      read: { changes: { kind: string; path: string }[]; gaps: unknown[] };
      left: boolean;
    };
    expect(out.ran).toBe(0);
    expect(out.status).toMatchObject({ method: 'kernel overlay in a user namespace', overlaid: [lower] });
    expect(out.read.changes.map((change) => `${change.kind} ${change.path.slice(lower.length + 1)}`)).toEqual(
      ['deleted docs/guide.md', 'created new.txt', 'deleted notes.txt'],
    );
    expect(out.read.gaps).toEqual([]);
    // The layers are gone (the kernel's mode-000 work directory included), the real files as they were.
    expect(out.left).toBe(false);
    expect(readFileSync(join(lower, 'notes.txt'), 'utf8')).toBe('keep\n');
    expect(existsSync(join(lower, 'docs', 'guide.md'))).toBe(true);
    expect(existsSync(join(lower, 'new.txt'))).toBe(false);
  });
});
