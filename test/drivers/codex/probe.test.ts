// The hook-trust probe (src/drivers/codex/probe.ts) on the real pinned Codex 0.169.0: it proves the deny hook
// stops a command before it runs, caches the proof per binary and config, and fails — so the replay refuses —
// for a Codex that skips its hook.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCodex } from '../../../src/drivers/codex/binary.js';
import { codexVersion } from '../../../src/drivers/codex/environment.js';
import { HookNotLive, knownModels, proveHookLive } from '../../../src/drivers/codex/probe.js';

let dir: string;
let binary: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codex-probe-'));
  binary = findCodex().path;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('proveHookLive', () => {
  it('finds the pinned binary, proves its hook live once, then takes the proof from the cache', async () => {
    expect(findCodex().version).toBe(codexVersion);
    const cacheFile = join(dir, 'cache.json');
    const first = await proveHookLive({ binary, version: codexVersion, cacheFile });
    expect(first.cached).toBe(false);
    expect(first.models).toContain('gpt-5.5');
    const again = await proveHookLive({ binary, version: codexVersion, cacheFile });
    expect(again).toEqual({ models: first.models, cached: true });
  }, 120_000);

  it('fails for a Codex run without the hook-trust flag: the probe command was not stopped', async () => {
    const wrapper = join(dir, 'codex-untrusted');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nfor arg; do shift; [ "$arg" = --dangerously-bypass-hook-trust ] || set -- "$@" "$arg"; done\nexec ${JSON.stringify(binary)} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const cacheFile = join(dir, 'untrusted.json');
    const probed = proveHookLive({ binary: wrapper, cacheFile });
    await expect(probed).rejects.toBeInstanceOf(HookNotLive);
    await expect(probed).rejects.toThrow('the probe call was not stopped by the deny hook');
    // Nothing cached: the next replay probes again.
    await expect(proveHookLive({ binary: wrapper, cacheFile })).rejects.toBeInstanceOf(HookNotLive);
  }, 120_000);

  it('fails for a binary that never asks its model', async () => {
    const silent = join(dir, 'codex-silent');
    writeFileSync(silent, '#!/bin/sh\necho "codex-cli 0.169.0"\n');
    chmodSync(silent, 0o755);
    expect(knownModels(silent)).toEqual([]);
    await expect(proveHookLive({ binary: silent, cacheFile: join(dir, 'silent.json') })).rejects.toThrow(
      "codex never sent the probe call's output",
    );
  });
});
