// The README's "Use it in CI" section, run as written: its gates file, and the `replay-history` steps of its
// GitHub Actions job (their `run:` lines and `env:`), in a checkout holding the sample sessions, with
// `replay-history` on PATH as `npm install -g` would put it and a model stand-in that answers without calling
// tools. The gates must fail (exit 4) and the report, the JUnit file and the step summary say so.
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, ran, root, tempDir } from '../helpers/cli.js';
import { type ModelServer, startModelServer } from '../helpers/model-server.js';

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Use it in CI'), readme.indexOf('## How it is built'));
const block = (lang: string) => new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section)?.[1] ?? '';

interface Step {
  name?: string;
  run?: string;
  env: Record<string, string>;
}

/** The job's steps: each `- ` item of `steps:`, its name, its one-line `run:` and its `env:` entries. */
function steps(yaml: string): Step[] {
  const out: Step[] = [];
  let inEnv = false;
  for (const line of yaml.split('\n')) {
    const item = /^ {6}- (.*)$/.exec(line);
    if (item) {
      out.push({ env: {} });
      inEnv = false;
    }
    const step = out.at(-1);
    if (!step) continue;
    const field = /^ {6}(?:- | {2})(\w[\w-]*):\s?(.*)$/.exec(line);
    if (field) {
      const [, key, value] = field;
      inEnv = key === 'env' && value === '';
      if (key === 'name') step.name = value;
      if (key === 'run' && value !== '|') step.run = value;
      continue;
    }
    const env = /^ {10}(\w+): (.*)$/.exec(line);
    if (inEnv && env) step.env[env[1] as string] = env[2] as string;
  }
  return out;
}

let work: ReturnType<typeof tempDir>;
let home: ReturnType<typeof tempDir>;
let server: ModelServer;
let shims: string;
beforeAll(async () => {
  work = tempDir('readme-ci-');
  home = tempDir('readme-ci-home-');
  symlinkSync(join(root, 'sample-sessions'), join(work.path, 'sessions'));
  writeFileSync(join(work.path, 'replay-history.toml'), block('toml'));
  shims = join(home.path, 'bin');
  mkdirSync(shims);
  writeFileSync(join(shims, 'replay-history'), `#!/bin/sh\nexec node ${JSON.stringify(bin)} "$@"\n`);
  chmodSync(join(shims, 'replay-history'), 0o755);
  server = await startModelServer({ responders: [() => ({ text: 'I would rather not call any tool.' })] });
});
afterAll(async () => {
  await server?.close();
  work?.remove();
  home?.remove();
});

describe('README: Use it in CI', () => {
  it('its job ingests the committed sessions, replays them gated, and fails the build naming the sessions', async () => {
    const job = steps(block('yaml'));
    const ours = job.filter((step) => step.run?.startsWith('replay-history '));
    expect(ours.map((step) => step.name)).toEqual([
      'Ingest the committed sessions',
      'Replay them against the model, gated',
    ]);
    expect(job.some((step) => step.run === 'npm install -g replay-history')).toBe(true);
    const summary = join(home.path, 'step-summary.md');
    const codes: number[] = [];
    for (const step of ours) {
      const result = await ran(
        execa('sh', ['-c', step.run as string], {
          cwd: work.path,
          reject: false,
          env: {
            ...step.env,
            // The stand-in for the job's model server.
            MODEL_URL: server.baseURL,
            PATH: `${shims}:${process.env.PATH}`,
            HOME: home.path,
            XDG_DATA_HOME: home.path,
            GITHUB_STEP_SUMMARY: summary,
            NO_COLOR: '1',
          },
        }),
      );
      codes.push(result.exitCode);
    }
    expect(codes).toEqual([0, 4]);
    expect(server.chatRequests().length).toBeGreaterThan(0);
    const report = readFileSync(join(work.path, 'replay.md'), 'utf8');
    expect(report).toMatch(/^## replay-history: run_\S+ — \d gate\(s\) failed/);
    expect(report).toContain('| ❌ | `--min-recall` | 90.0% | recall 0.0%');
    expect(readFileSync(summary, 'utf8')).toBe(`${report}\n`);
    const junit = readFileSync(join(work.path, 'replay.xml'), 'utf8');
    expect(junit).toMatch(/failures="[1-9]/);
    expect(junit).toContain('<failure type="gate" message="--min-recall 90.0% failed');
    expect(readFileSync(join(work.path, 'pairs.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThan(0);
  });
});
