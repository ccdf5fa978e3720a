// The Qwen driver's deny hook: the script on its own (a deny whatever happens to its output channels), and on
// the real pinned Qwen Code 0.24.4 through the probe (src/drivers/qwen/probe.ts) — our hook stops the call with
// our reason; a hook that fails (exit 1, killed, exit 2 with no reason) lets Qwen run the tool, which is why the
// script must not be able to fail and why the probe runs before any replay; and a workspace's own
// .qwen/settings.json runs its code and can turn every hook off below our settings layer (ours still wins, but the
// driver refuses such a workspace: test/e2e/qwen-driver.test.ts).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findQwen } from '../../../src/drivers/qwen/binary.js';
import { denyAnswer, denyReason, hookScript, qwenVersion } from '../../../src/drivers/qwen/environment.js';
import { HookNotLive, proveHookLive } from '../../../src/drivers/qwen/probe.js';

const dir = mkdtempSync(join(tmpdir(), 'qwen-hook-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const script = join(dir, 'deny.sh');
writeFileSync(script, hookScript());
chmodSync(script, 0o700);
const input = JSON.stringify({
  hook_event_name: 'PreToolUse',
  tool_name: 'run_shell_command',
  tool_input: {},
});

/** Runs the hook as `sh -c`, its stdio redirected by `redirect` (closing or filling a channel). */
const hook = (redirect: string) =>
  spawnSync('/bin/sh', ['-c', `${JSON.stringify(script)} ${redirect}`], { input, encoding: 'utf8' });

describe('the deny hook script', () => {
  it('denies with our reason on stderr and exit 2 (Qwen: a blocking deny with that text)', () => {
    const ran = hook('');
    expect(ran.status).toBe(2);
    expect(ran.stderr.trim()).toBe(denyReason);
    expect(ran.stdout).toBe('');
  });

  it('denies as JSON on stdout with exit 0 when stderr cannot be written: never a bare exit status', () => {
    for (const redirect of ['2>&-', '2>/dev/full']) {
      const ran = hook(redirect);
      expect(ran.status, redirect).toBe(0);
      expect(JSON.parse(ran.stdout), redirect).toEqual(JSON.parse(denyAnswer));
      expect(JSON.parse(denyAnswer).hookSpecificOutput.permissionDecision).toBe('deny');
    }
  });

  it('denies whatever its input: none, closed, or not JSON', () => {
    for (const redirect of ['</dev/null', '<&-']) expect(hook(redirect).status, redirect).toBe(2);
    const garbage = spawnSync(script, [], { input: 'not json', encoding: 'utf8' });
    expect(garbage.status).toBe(2);
    expect(garbage.stderr.trim()).toBe(denyReason);
  });
});

const binary = findQwen();
const cacheFile = join(dir, 'cache.json');
const failing = (name: string, body: string): string => {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\ncat >/dev/null\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
};

describe(`the hook on the real Qwen Code ${qwenVersion}`, () => {
  it('is the pinned version', () => {
    expect(binary.version).toBe(qwenVersion);
  });

  it('stops the probe call before it runs: Qwen sends exactly our reason under its tool_call_id', async () => {
    await expect(proveHookLive({ binary: binary.path, cacheFile })).resolves.toEqual({ cached: false });
    // Proved once per binary and settings: the second time is the cache's.
    await expect(proveHookLive({ binary: binary.path, cacheFile })).resolves.toEqual({ cached: true });
  }, 120_000);

  it.each([
    ['exits 1', 'echo failing >&2; exit 1'],
    ['is killed', 'kill -9 $$'],
    ['exits 2 saying nothing', 'exit 2'],
  ])(
    'runs the tool when a hook %s (Qwen fails open): the probe says so',
    async (_, body) => {
      const hook = failing(`hook-${body.length}.sh`, body);
      await expect(proveHookLive({ binary: binary.path, cacheFile, hook })).rejects.toThrow(
        new HookNotLive('the probe command ran: this qwen ran a tool its deny hook should have stopped'),
      );
    },
    120_000,
  );

  it("runs a workspace's .qwen/settings.json hooks, though our layer keeps the deny hook on", async () => {
    const ran = join(dir, 'project-code-ran');
    await proveHookLive({
      binary: binary.path,
      cacheFile,
      workspace: (workspace) => {
        mkdirSync(join(workspace, '.qwen'));
        writeFileSync(
          join(workspace, '.qwen', 'settings.json'),
          JSON.stringify({
            disableAllHooks: true,
            hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${ran}` }] }] },
          }),
        );
      },
    });
    // The probe passed: our system-layer `disableAllHooks: false` beat the workspace's `true`. Its own hook ran.
    expect(existsSync(ran)).toBe(true);
  }, 120_000);
});
