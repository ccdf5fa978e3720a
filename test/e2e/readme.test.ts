import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ran, root, tempDir } from '../helpers/cli.js';

const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** Every command line of every ```sh block, comments dropped. */
const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
  (m[1] ?? '').split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#')),
);

let home: ReturnType<typeof tempDir>;
beforeAll(() => {
  home = tempDir('replay-readme-');
});
afterAll(() => home.remove());

/** Runs a README command as a user would, in the repo, with a private data dir (the default store lands there). */
const shell = (command: string) =>
  ran(
    execa('sh', ['-c', command], {
      cwd: root,
      reject: false,
      env: { XDG_DATA_HOME: home.path, HOME: home.path, NO_COLOR: '1', REPLAY_HISTORY_DB: '' },
    }),
  );

describe('README', () => {
  it('gives the install-and-run command first and the test command second', () => {
    expect(blocks[0]).toEqual([
      'npm ci && ./bin/replay-history.js ingest sample-sessions && ./bin/replay-history.js sessions',
    ]);
    expect(blocks[1]).toEqual(['npm ci && npm test']);
  });

  it('is what CI runs: .ci/run calls the README test command', () => {
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toContain('\nnpm ci && npm test\n');
  });

  it('main job: ingests the sample sessions and lists them (npm ci is what CI itself runs)', async () => {
    const command = (blocks[0]?.[0] ?? '').replace(/^npm ci && /, '');
    const result = await shell(command);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('sessions 6 new, 0 updated, 0 unchanged');
    expect(result.stdout).toContain('GET /todos?limit=5 returns only 4 items');
    expect(result.stdout).toMatch(/subagent of \w{8}\s+\S+ \S+\s+3\s+2\s+Survey todo-api/);
  });

  it('every usage command runs and succeeds, in order, against the same store', async () => {
    const usage = blocks[2] ?? [];
    expect(usage.length).toBeGreaterThanOrEqual(5);
    for (const command of usage) {
      const result = await shell(command);
      expect({ command, exitCode: result.exitCode, stderr: result.stderr }).toEqual({
        command,
        exitCode: 0,
        stderr: '',
      });
      expect(result.stdout.length).toBeGreaterThan(0);
    }
  });
});
