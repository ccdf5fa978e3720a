// The tools opencode offers its model are found by asking the real binary, not from a list written here; the
// answer is cached per binary and model.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../../src/drivers/opencode/plugin.js';
import { offeredTools, ProbeError } from '../../../src/drivers/opencode/probe.js';
import { opencodeBinary } from '../../helpers/opencode.js';

const scratch = mkdtempSync(join(tmpdir(), 'opencode-probe-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('offeredTools', () => {
  it('asks the real opencode which tools it offers, then answers from its cache', async () => {
    const cacheFile = join(scratch, 'cache', 'opencode-tools.json');
    const first = await offeredTools({ binary: opencodeBinary(), model: 'scripted', cacheFile });
    expect(first.cached).toBe(false);
    // What a headless default agent of 1.18.33 offers (issue 8 found the same by hand).
    expect(first.tools).toEqual([
      'bash',
      'edit',
      'glob',
      'grep',
      'read',
      'skill',
      'task',
      'todowrite',
      'webfetch',
      'write',
    ]);
    // The plugin's pinned list covers every one of them (it adds those opencode filters by model or permission).
    for (const tool of first.tools) expect(builtinTools).toContain(tool);
    expect(existsSync(cacheFile)).toBe(true);

    const started = performance.now();
    const again = await offeredTools({ binary: opencodeBinary(), model: 'scripted', cacheFile });
    expect(again).toEqual({ tools: first.tools, cached: true });
    expect(performance.now() - started).toBeLessThan(1000);
    // Keyed by model too: another model is asked again (not run here), so its key is not in the cache yet.
    expect(Object.keys(JSON.parse(readFileSync(cacheFile, 'utf8')) as object)).toHaveLength(1);
  });

  it('fails with what opencode said when it never asks its model', async () => {
    const fake = join(scratch, 'not-opencode');
    writeFileSync(fake, '#!/bin/sh\necho "no such command: run" >&2\nexit 3\n');
    chmodSync(fake, 0o755);
    const probing = offeredTools({ binary: fake, model: 'scripted', cacheFile: join(scratch, 'other.json') });
    await expect(probing).rejects.toBeInstanceOf(ProbeError);
    await expect(probing).rejects.toThrow(
      /never asked its model with tools \(exit 3\):\nno such command: run/,
    );
    expect(existsSync(join(scratch, 'other.json'))).toBe(false);
  });
});
