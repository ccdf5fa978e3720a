// The Gemini driver's deny hook: the script on its own (a deny whatever happens to its output channels), and on
// the real pinned Gemini CLI 0.61.0 through the probe (src/drivers/gemini/probe.ts) — our hook stops the call
// with our reason; a hook that fails (exit 1, killed, exit 0 saying nothing) lets Gemini CLI run the tool, which
// is why the script must not be able to fail and why the probe runs before any replay.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findGemini } from '../../../src/drivers/gemini/binary.js';
import {
  denyAnswer,
  denyReason,
  geminiVersion,
  hookScript,
} from '../../../src/drivers/gemini/environment.js';
import { HookNotLive, proveHookLive } from '../../../src/drivers/gemini/probe.js';

const dir = mkdtempSync(join(tmpdir(), 'gemini-hook-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const script = join(dir, 'deny.sh');
writeFileSync(script, hookScript());
chmodSync(script, 0o700);
const input = JSON.stringify({
  hook_event_name: 'BeforeTool',
  tool_name: 'run_shell_command',
  tool_input: {},
});

/** Runs the hook as `sh -c`, its stdio redirected by `redirect` (closing or filling a channel). */
const hook = (redirect: string) =>
  spawnSync('/bin/sh', ['-c', `${JSON.stringify(script)} ${redirect}`], { input, encoding: 'utf8' });

describe('the deny hook script', () => {
  it('denies as JSON on stdout with exit 0 (Gemini CLI: a deny with our reason)', () => {
    const ran = hook('');
    expect(ran.status).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ decision: 'deny', reason: denyReason });
    expect(JSON.parse(denyAnswer)).toEqual({ decision: 'deny', reason: denyReason });
  });

  it('exits 2 with the reason on stderr when stdout cannot be written: never a bare exit 0', () => {
    for (const redirect of ['>&-', '>/dev/full']) {
      const ran = hook(redirect);
      expect(ran.status, redirect).toBe(2);
      // Last on stderr (after the shell's own complaint about the failed write).
      expect(ran.stderr.trim().split('\n').at(-1), redirect).toBe(denyReason);
    }
  });

  it('denies whatever its input: none, closed, or not JSON', () => {
    for (const redirect of ['</dev/null', '<&-']) expect(hook(redirect).status, redirect).toBe(0);
    const garbage = spawnSync(script, [], { input: 'not json', encoding: 'utf8' });
    expect(JSON.parse(garbage.stdout)).toEqual({ decision: 'deny', reason: denyReason });
  });
});

const binary = findGemini();
const cacheFile = join(dir, 'cache.json');
const failing = (name: string, body: string): string => {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\ncat >/dev/null\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
};

describe(`the hook on the real Gemini CLI ${geminiVersion}`, () => {
  it('is the pinned version', () => {
    expect(binary.version).toBe(geminiVersion);
  });

  it('stops the probe call before it runs: the CLI sends back exactly "Tool execution blocked: <our reason>"', async () => {
    await expect(proveHookLive({ binary: binary.path, cacheFile })).resolves.toEqual({ cached: false });
    // Proved once per binary and settings: the second time is the cache's.
    await expect(proveHookLive({ binary: binary.path, cacheFile })).resolves.toEqual({ cached: true });
  }, 120_000);

  it('blocks too when the hook falls back to exit 2 with the reason on stderr (stdout unwritable)', async () => {
    const fallback = failing('fallback.sh', `printf '%s\\n' '${denyReason}' >&2; exit 2`);
    await expect(proveHookLive({ binary: binary.path, cacheFile, hook: fallback })).resolves.toEqual({
      cached: false,
    });
  }, 120_000);

  it.each([
    ['exits 1', 'echo failing >&2; exit 1'],
    ['is killed', 'kill -9 $$'],
    ['exits 0 saying nothing', 'exit 0'],
  ])(
    'runs the tool when a hook %s (Gemini CLI fails open): the probe says so',
    async (_, body) => {
      const hook = failing(`hook-${body.length}.sh`, body);
      await expect(proveHookLive({ binary: binary.path, cacheFile, hook })).rejects.toThrow(
        new HookNotLive('the probe command ran: this gemini ran a tool its deny hook should have stopped'),
      );
    },
    120_000,
  );
});
