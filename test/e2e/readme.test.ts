import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ran, root, tempDir } from '../helpers/cli.js';
import { type ModelServer, startModelServer } from '../helpers/model-server.js';

const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** Every command line of every ```sh block, comments dropped. */
const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
  (m[1] ?? '').split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#')),
);

let home: ReturnType<typeof tempDir>;
let work: ReturnType<typeof tempDir>;
let server: ModelServer;
beforeAll(async () => {
  home = tempDir('replay-readme-');
  // Commands run where a user would run them: a directory with the repository's bin and samples in it, so the
  // files they write (pairs.jsonl, …) land there, not in the repository.
  work = tempDir('replay-readme-work-');
  for (const entry of ['bin', 'sample-sessions']) symlinkSync(join(root, entry), join(work.path, entry));
  // The model stand-in for the provider examples: it answers every turn, OpenAI or Anthropic wire.
  server = await startModelServer({ responders: [() => ({ text: 'Looked at it; nothing to change.' })] });
});
afterAll(async () => {
  await server.close();
  work.remove();
  home.remove();
});

/** Runs a README command as a user would, in the repo, with a private data dir (the default store lands there). */
const shell = (command: string) =>
  ran(
    execa('sh', ['-c', command], {
      cwd: work.path,
      reject: false,
      env: {
        XDG_DATA_HOME: home.path,
        HOME: home.path,
        NO_COLOR: '1',
        REPLAY_HISTORY_DB: '',
        OPENAI_BASE_URL: server.baseURL,
        ANTHROPIC_BASE_URL: server.baseURL.replace(/\/v1$/, ''),
      },
    }),
  );

describe('README', () => {
  it('gives the install-and-run command first and the test command second', () => {
    expect(blocks[0]).toEqual(['npm ci && ./bin/replay-history.js replay sample-sessions --force']);
    expect(blocks[1]).toEqual(['npm ci && npm test']);
  });

  it('is what CI runs: .ci/run calls the README test command', () => {
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toContain('\nnpm ci && npm test\n');
  });

  it('main job: replays the sample sessions with no model; every pair equals its original (npm ci is what CI runs)', async () => {
    const command = (blocks[0]?.[0] ?? '').replace(/^npm ci && /, '');
    for (const attempt of [1, 2]) {
      // Twice: the command must work again on a machine where it already ran (pairs.jsonl exists then).
      const result = await shell(command);
      expect({ attempt, exitCode: result.exitCode }).toEqual({ attempt, exitCode: 0 });
      expect(result.stdout).toMatch(/turns {7}30 done, 0 failed, over 6 session\(s\)/);
      expect(result.stdout).toContain('precision 100.0%, recall 100.0%');
    }
    const pairs = readFileSync(join(work.path, 'pairs.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(pairs).toHaveLength(30);
    for (const pair of pairs) expect(pair.completion).toEqual(pair.original);
  });

  it('every usage command runs and succeeds, in order, against the same store', async () => {
    const usage = blocks[2] ?? [];
    expect(usage.length).toBeGreaterThanOrEqual(5);
    for (const command of usage) {
      const result = await shell(command);
      // stderr is for talk (where the pairs went); no error and no warning may appear there.
      const problems = result.stderr.split('\n').filter((line) => /^(error|warning):/.test(line));
      expect({ command, exitCode: result.exitCode, problems }).toEqual({
        command,
        exitCode: 0,
        problems: [],
      });
      // Data goes to stdout, or to the --out file.
      const out = /--out (\S+)/.exec(command)?.[1];
      if (out) {
        const name = out.replace(/\.jsonl$/, '');
        const written = readdirSync(work.path).filter((f) => f === out || f.startsWith(`${name}.`));
        expect({ command, written: written.length > 0 }).toEqual({ command, written: true });
      } else expect({ command, stdout: result.stdout.length > 0 }).toEqual({ command, stdout: true });
    }
    // The provider examples really reached the model stand-in, on both wires.
    const paths = server.chatRequests().map((request) => request.path);
    expect(paths).toContain('/v1/chat/completions');
    expect(paths).toContain('/v1/messages');
  });
});
