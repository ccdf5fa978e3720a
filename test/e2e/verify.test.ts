import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Report } from '../../src/verify/check.js';
import { run, tempDir } from '../helpers/cli.js';
import { runUnprivileged } from '../helpers/unprivileged.js';

type JsonReport = Report & { exitCode: number; command: { argv: string[]; exitCode: number | null } };

let dir: ReturnType<typeof tempDir>;
/** The directory the command runs in (the default watched root), canonical. */
let work: string;
/** A private XDG_CACHE_HOME, so the hash cache never goes to ~/.cache. */
let xdg: string;

beforeEach(() => {
  dir = tempDir('replay-history-verify-e2e-');
  const base = realpathSync(dir.path);
  work = join(base, 'work');
  xdg = join(base, 'xdg');
  mkdirSync(join(work, 'src'), { recursive: true });
  mkdirSync(xdg);
  writeFileSync(join(work, 'a.txt'), 'alpha\n');
  writeFileSync(join(work, 'src', 'main.c'), 'int main(void) { return 0; }\n');
});
afterEach(() => {
  if (existsSync(join(work, 'locked'))) chmodSync(join(work, 'locked'), 0o755);
  dir.remove();
});

const verify = (
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
) =>
  run(['verify', ...args], {
    cwd: options.cwd ?? work,
    env: { XDG_CACHE_HOME: xdg, ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
  });

const report = (stdout: string) => JSON.parse(stdout) as JsonReport;

/** bubblewrap present and able to make a sandbox here (it can be installed and still not work). */
const probe = spawnSync('bwrap', ['--bind', '/', '/', '--unshare-net', '--die-with-parent', 'true']);
const bwrapInstalled = !(probe.error && (probe.error as NodeJS.ErrnoException).code === 'ENOENT');
const bwrapWorks = bwrapInstalled && probe.status === 0;

describe('replay-history verify: exit codes', () => {
  it('exits 0 when the command succeeds and nothing changed', async () => {
    const result = await verify(['--', 'cat', 'a.txt']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(`no changes under ${work}`);
    expect(result.stderr).toContain('command exited 0');
  });

  it('exits 1 when the command fails and nothing changed', async () => {
    const result = await verify(['--', 'false']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('no changes under');
    expect(result.stderr).toContain('command exited 1');
  });

  it('exits 3 when something changed, whatever the command returned', async () => {
    const result = await verify(['--', 'sh', '-c', 'echo x >> a.txt; echo y > new.txt; rm src/main.c']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('3 changes under');
    expect(result.stderr).toMatch(/modified +a\.txt · content differs \(6 → 8 bytes\)/);
    expect(result.stderr).toMatch(/created +new\.txt/);
    expect(result.stderr).toMatch(/deleted +src\/main\.c/);
    const failed = await verify(['--', 'sh', '-c', 'echo y > new2.txt; exit 5']);
    expect(failed.exitCode).toBe(3);
    expect(failed.stderr).toContain('command exited 5');
  });

  it('exits 2 when the command cannot be found, or a --watch directory does not exist', async () => {
    const missing = await verify(['--', 'no-such-command-for-verify']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('could not start: no-such-command-for-verify: command not found');
    const noDir = await verify(['--watch', join(work, 'nope'), '--', 'true']);
    expect(noDir.exitCode).toBe(2);
    expect(noDir.stderr).toContain(`error: --watch ${join(work, 'nope')}: no such directory`);
    expect(noDir.stderr).toContain('hint:');
  });
});

describe('replay-history verify --no-watcher', () => {
  it('gives the same verdict from the manifests alone, and says there was no watcher', async () => {
    const changed = await verify(['--no-watcher', '--', 'sh', '-c', 'echo x >> a.txt; echo y > new.txt']);
    expect(changed.exitCode).toBe(3);
    expect(changed.stderr).toContain('2 changes under');
    expect(changed.stderr).toContain('no watcher (--no-watcher)');
    expect(changed.stderr).toMatch(/modified +a\.txt · content differs \(6 → 8 bytes\) · manifest/);
    expect(changed.stderr).not.toContain('the watcher did not see');
    const json = await verify(['--no-watcher', '--json', '--', 'cat', 'a.txt']);
    expect(json.exitCode).toBe(0);
    expect(report(json.stdout).watcher).toMatchObject({ backend: 'none', events: 0, missed: 0 });
  });
});

describe('replay-history verify: output', () => {
  it('watches the current directory by default', async () => {
    const result = await verify(['--json', '--', 'true'], { cwd: join(work, 'src') });
    expect(result.exitCode).toBe(0);
    const json = report(result.stdout);
    expect(json.roots).toEqual([join(work, 'src')]);
    expect(json.manifest.before).toBe(2); // src and src/main.c
    // A change outside it is not looked at.
    const outside = await verify(['--json', '--', 'sh', '-c', 'echo x > ../outside.txt'], {
      cwd: join(work, 'src'),
    });
    expect(report(outside.stdout).changes).toEqual([]);
    expect(outside.exitCode).toBe(0);
  });

  it('with --json prints only the report on stdout; the command output goes to stderr', async () => {
    const result = await verify([
      '--json',
      '--',
      'sh',
      '-c',
      'printf "%s-%s\\n" hello child; printf "%s-%s\\n" oops child >&2; echo x > new.txt; chmod 600 a.txt',
    ]);
    expect(result.exitCode).toBe(3);
    const json = report(result.stdout);
    expect(json.exitCode).toBe(3);
    expect(json.clean).toBe(false);
    expect(json.command).toMatchObject({ exitCode: 0, argv: ['sh', '-c', expect.stringContaining('hello')] });
    expect(json.changes.map((c) => [c.kind, c.path])).toEqual([
      ['mode changed', join(work, 'a.txt')],
      ['created', join(work, 'new.txt')],
    ]);
    expect(json.changes[1]?.layers).toEqual(['manifest', 'watcher']);
    // What the child printed is not in the argv the report repeats, so it can be looked for.
    expect(result.stdout).not.toContain('hello-child');
    expect(result.stderr).toContain('hello-child');
    expect(result.stderr).toContain('oops-child');
  });

  it('leaves an --exclude path out, even when the command deletes and remakes it', async () => {
    mkdirSync(join(work, 'build'));
    writeFileSync(join(work, 'build', 'old.o'), 'o');
    const script = 'rm -rf build && mkdir build && echo x > build/new.o && echo y >> src/main.c';
    const result = await verify(['--exclude', 'build', '--json', '--', 'sh', '-c', script]);
    expect(result.exitCode).toBe(3);
    expect(report(result.stdout).changes.map((c) => [c.kind, c.path])).toEqual([
      ['modified', join(work, 'src', 'main.c')],
    ]);
    const clean = await verify([
      '--exclude',
      join(work, 'build'),
      '--',
      'sh',
      '-c',
      'rm -rf build && mkdir build',
    ]);
    expect(clean.exitCode).toBe(0);
    expect(clean.stderr).toContain('no changes under');
  });

  it('writes JUnit XML with a failure for each changed root and for a failed command', async () => {
    const other = join(dir.path, 'other');
    mkdirSync(other);
    const junit = join(work, 'verify.xml'); // inside a watched root: left out of the check
    const result = await verify([
      '--watch',
      work,
      '--watch',
      other,
      '--junit',
      junit,
      '--',
      'sh',
      '-c',
      `echo x > ${other}/new.txt; exit 4`,
    ]);
    expect(result.exitCode).toBe(3);
    const xml = readFileSync(junit, 'utf8');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(xml.trimEnd().endsWith('</testsuites>')).toBe(true);
    expect(xml).toMatch(/<testsuites [^>]*tests="3" failures="2"/);
    expect(xml).toMatch(/<testsuite [^>]*tests="3" failures="2"/);
    // Every element opened is closed.
    for (const tag of ['testsuites', 'testsuite', 'testcase']) {
      const opened = xml.match(new RegExp(`<${tag}[ >]`, 'g'))?.length ?? 0;
      const closed =
        (xml.match(new RegExp(`</${tag}>`, 'g'))?.length ?? 0) +
        (xml.match(new RegExp(`<${tag} [^>]*/>`, 'g'))?.length ?? 0);
      expect(closed).toBe(opened);
    }
    expect(xml.match(/<failure /g)).toHaveLength(2);
    expect(xml).toContain(
      `<testcase classname="replay-history.verify" name="no side effects under ${work}"/>`,
    );
    expect(xml).toContain(`name="no side effects under ${realpathSync(other)}">`);
    expect(xml).toMatch(
      /<failure type="side-effects" message="1 change">created: [^<]*other\/new\.txt<\/failure>/,
    );
    expect(xml).toContain('<failure type="command-failed" message="exited 4"/>');
    expect(xml).toContain('name="command: sh -c echo x &gt; ');

    const clean = await verify(['--junit', junit, '--', 'true']);
    expect(clean.exitCode).toBe(0);
    const cleanXml = readFileSync(junit, 'utf8');
    expect(cleanXml).toMatch(/<testsuites [^>]*tests="2" failures="0"/);
    expect(cleanXml).not.toContain('<failure');
  });

  it("passes the command's stdin, stdout and stderr through", async () => {
    const echo = await verify(['--', 'echo', 'hello']);
    expect(echo.exitCode).toBe(0);
    expect(echo.stdout).toBe('hello'); // (the final newline is stripped by execa)
    const cat = await verify(['--', 'cat'], { input: 'piped in\n' });
    expect(cat.stdout).toBe('piped in');
    const stderr = await verify(['--', 'sh', '-c', 'echo to-stderr >&2']);
    expect(stderr.stdout).toBe('');
    expect(stderr.stderr).toContain('to-stderr');
  });

  it('gives the arguments after -- to the command, options included', async () => {
    const ls = await verify(['--', 'ls', '-la']);
    expect(ls.exitCode).toBe(0);
    expect(ls.stdout).toMatch(/^total \d+/);
    expect(ls.stdout).toMatch(/ a\.txt\n/);
    expect(ls.stdout).toMatch(/ \.\.\n/);
    const args = await verify([
      '--',
      'sh',
      '-c',
      'printf "[%s]" "$@"',
      'sh',
      '-la',
      '--json',
      '--watch',
      'x',
    ]);
    expect(args.exitCode).toBe(0);
    expect(args.stdout).toBe('[-la][--json][--watch][x]');
  });

  it('--help names every option and shows an example of each', async () => {
    const result = await verify(['--help']);
    expect(result.exitCode).toBe(0);
    const [options, examples] = result.stdout.split('Examples:') as [string, string];
    expect(examples).toBeDefined();
    for (const option of ['--watch', '--exclude', '--json', '--junit', '--sandbox']) {
      expect(options).toContain(option);
      expect(examples).toMatch(new RegExp(`\\$ replay-history verify .*${option}`));
    }
    expect(result.stdout).toContain('Exit codes: 3 if anything changed');
  });

  it('lists a directory it cannot read as not checked', async () => {
    // Root reads anything, so this runs as an unprivileged user then; the tree must be reachable for it.
    chmodSync(dir.path, 0o755);
    chmodSync(xdg, 0o777);
    mkdirSync(join(work, 'locked'));
    writeFileSync(join(work, 'locked', 'secret'), 'x');
    chmodSync(join(work, 'locked'), 0o000);
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = xdg;
    try {
      const result = await runUnprivileged(['verify', '--json', '--', 'true'], work);
      const json = report(result.stdout);
      expect(json.gaps).toEqual([{ path: join(work, 'locked'), reason: 'EACCES' }]);
      expect(json.changes).toEqual([]);
      const human = await runUnprivileged(['verify', '--', 'true'], work);
      expect(human.stderr).toContain('not checked: 1 entry could not be read: locked (EACCES)');
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });
});

describe('replay-history verify --sandbox', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it.runIf(bwrapWorks)(
    'makes the watched directory read-only: writes fail and the report is clean',
    async () => {
      const result = await verify([
        '--sandbox',
        '--json',
        '--',
        'sh',
        '-c',
        'cat a.txt; echo x > new.txt; echo y >> a.txt; rm src/main.c',
      ]);
      expect(result.stderr).toContain('alpha'); // it could read (stdout goes to stderr with --json)
      expect(result.stderr).toContain('Read-only file system');
      expect(result.exitCode).toBe(1);
      const json = report(result.stdout);
      expect(json.changes).toEqual([]);
      expect(json.command.exitCode).not.toBe(0);
      expect(existsSync(join(work, 'new.txt'))).toBe(false);
      expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('alpha\n');
      expect(existsSync(join(work, 'src', 'main.c'))).toBe(true);
    },
  );

  it.runIf(bwrapWorks)(
    'cuts the network: a server on 127.0.0.1 outside the sandbox cannot be reached',
    async () => {
      const listening = createServer((socket) => {
        socket.on('error', () => {}); // the client exits as soon as it is connected
        socket.destroy();
      });
      server = listening;
      await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
      const { port } = listening.address() as { port: number };
      const connect = [
        'node',
        '-e',
        `require('node:net').connect(${port}, '127.0.0.1')` +
          ".on('connect', () => { console.log('connected'); process.exit(0); })" +
          ".on('error', (e) => { console.log(e.code); process.exit(1); })",
      ];
      // The same command reaches the server without the sandbox: the test can tell the difference.
      const open = await verify(['--', ...connect]);
      expect(open.stdout).toBe('connected');
      expect(open.exitCode).toBe(0);
      const closed = await verify(['--sandbox', '--', ...connect]);
      expect(closed.stdout).toBe('ECONNREFUSED');
      expect(closed.exitCode).toBe(1);
    },
  );

  it.runIf(bwrapWorks)('leaves an --exclude path inside the watched directory writable', async () => {
    mkdirSync(join(work, 'out'));
    const result = await verify([
      '--sandbox',
      '--exclude',
      'out',
      '--json',
      '--',
      'sh',
      '-c',
      'echo built > out/result.txt && mkdir out/more',
    ]);
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(work, 'out', 'result.txt'), 'utf8')).toBe('built\n');
    expect(report(result.stdout)).toMatchObject({ clean: true, changes: [] });
    expect(report(result.stdout).excluded).toContain(join(work, 'out'));
  });

  it.runIf(bwrapWorks)('exits 2 for a command that cannot be found, as without the sandbox', async () => {
    const result = await verify(['--sandbox', '--', 'no-such-command-for-verify']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('could not start: no-such-command-for-verify: command not found');
  });

  it('exits 2 naming bubblewrap when bwrap is not on PATH, without running the command', async () => {
    // A PATH with node and sh but no bwrap.
    const bin = join(dir.path, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const result = await verify(['--sandbox', '--', 'sh', '-c', 'echo ran > ran.txt'], {
      env: { PATH: bin },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: --sandbox needs bubblewrap (bwrap), which is not installed');
    expect(result.stderr).toMatch(/hint: install it .*apt-get install bubblewrap/);
    expect(existsSync(join(work, 'ran.txt'))).toBe(false);
  });

  it.runIf(bwrapInstalled && !bwrapWorks)(
    'exits 2 saying why when bubblewrap cannot make a sandbox',
    async () => {
      const result = await verify(['--sandbox', '--', 'true']);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('error: bubblewrap cannot make a sandbox here');
    },
  );
});
