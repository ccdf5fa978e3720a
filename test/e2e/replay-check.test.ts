import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run, tempDir } from '../helpers/cli.js';
import { type ModelServer, startModelServer } from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

// `replay` under the side-effect checker: the recorded cwd of each session (when it exists here) and each
// --watch directory are checked before and after; the store, the pairs file and the checker's own cache are
// left out by exact path even when they live inside a watched directory.
let dir: ReturnType<typeof tempDir>;
let workspace: string;
let server: ModelServer | undefined;
let env: Record<string, string>;

beforeEach(() => {
  dir = tempDir();
  workspace = join(dir.path, 'workspace');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  writeFileSync(join(workspace, 'src', 'app.js'), 'export const answer = 42;\n');
  writeFileSync(join(workspace, 'README.md'), '# app\n');
  // Everything the tool writes lives inside the watched workspace: it must not count as a side effect.
  env = {
    XDG_DATA_HOME: join(workspace, '.data'),
    XDG_CACHE_HOME: join(workspace, '.cache'),
  };
  mkdirSync(join(dir.path, 'logs'));
  mkdirSync(join(dir.path, 'elsewhere'));
  writeTranscript(join(dir.path, 'logs', 'session.jsonl'), {
    sessionId: 'a1b2c3d4-0000-4000-8000-000000000001',
    cwd: workspace,
    prompt: 'What does app.js export?',
    steps: [
      {
        calls: [
          {
            id: 'toolu_1',
            name: 'Read',
            input: { file_path: join(workspace, 'src', 'app.js') },
            result: '1\texport const answer = 42;',
          },
        ],
      },
    ],
    answer: 'It exports answer = 42.',
  });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  dir.remove();
});

const replay = (args: string[]) =>
  run(['replay', join(dir.path, 'logs'), '--out', join(workspace, 'pairs.jsonl'), '--force', ...args], {
    env,
  });
const runsJson = async (...args: string[]) =>
  JSON.parse((await run(['runs', ...args, '--json'], { env })).stdout);

describe('replay under the side-effect checker', () => {
  it('checks the recorded cwd and reports a clean run, with its own files inside it left out', async () => {
    const result = await replay(['--json', '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const output = JSON.parse(result.stdout);
    expect(output.sideEffects.checked).toBe(true);
    expect(output.sideEffects.roots).toEqual([workspace]);
    expect(output.sideEffects.changes).toEqual([]);
    // The workspace with its files, not the store, cache or pairs file.
    expect(output.sideEffects.manifest.after).toBeGreaterThanOrEqual(4);
    const [listed] = await runsJson();
    expect(listed.sideEffects).toEqual({ checks: 1, changes: 0, roots: [workspace] });
    const table = await run(['runs'], { env });
    expect(table.stdout).toMatch(/SIDE EFFECTS[\s\S]*\bnone\b/);
  });

  it('exits 3 when something changes the workspace during the run, and stores what changed with the run', async () => {
    // The stand-in for "something else": the model server writes into the workspace while it answers.
    server = await startModelServer({
      responders: [
        () => {
          writeFileSync(join(workspace, 'src', 'app.js'), 'export const answer = 43;\n');
          writeFileSync(join(workspace, 'written-during-replay.txt'), 'oops');
          return { text: 'done' };
        },
      ],
    });
    const result = await replay([
      '--model',
      'openai:qwen',
      '--base-url',
      server.baseURL,
      '--concurrency',
      '1',
    ]);
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(/side effects 2 changes under/);
    expect(result.stdout).toMatch(/modified\s+src\/app\.js · content differs/);
    expect(result.stdout).toMatch(/created\s+written-during-replay\.txt/);
    const [listed] = await runsJson();
    expect(listed.sideEffects).toEqual({ checks: 1, changes: 2, roots: [workspace] });
    const shown = await runsJson(listed.id);
    expect(
      shown.sideEffects.list.map((c: { kind: string; path: string }) => [
        c.kind,
        c.path.slice(workspace.length),
      ]),
    ).toEqual([
      ['modified', '/src/app.js'],
      ['created', '/written-during-replay.txt'],
    ]);
    for (const change of shown.sideEffects.list) expect(change.layers).toContain('manifest');
    const human = await run(['runs', listed.id], { env });
    expect(human.stdout).toMatch(/side effects 2 under/);
    expect(human.stdout).toContain(join(workspace, 'written-during-replay.txt'));
    // The pairs were still written: a side effect does not cost the data.
    expect(readFileSync(join(workspace, 'pairs.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it.each([
    ['a failed turn', { status: 500, message: 'boom' }, 'HTTP 500: boom'],
    ['a fatal error', { status: 401, message: 'bad key' }, 'authentication failed (401)'],
  ])('side effects (3) outrank %s (1) in the exit code, and both are said', async (_what, error, said) => {
    server = await startModelServer({
      responders: [
        () => {
          writeFileSync(join(workspace, 'written-during-replay.txt'), 'oops');
          return { error };
        },
      ],
    });
    const result = await replay([
      '--model',
      'openai:qwen',
      '--base-url',
      server.baseURL,
      '--concurrency',
      '1',
      '--retries',
      '0',
    ]);
    expect(result.exitCode).toBe(3);
    expect(`${result.stdout}${result.stderr}`).toContain(said);
    expect(`${result.stdout}${result.stderr}`).toMatch(/created\s+written-during-replay\.txt/);
  });

  it('a usage error (2) is found before anything runs, so nothing else can outrank it', async () => {
    const result = await replay(['--model', 'openai:qwen', '--append']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--append and --force contradict each other');
  });

  it('checks --watch directories too, and says when a recorded cwd is not on this machine', async () => {
    const other = join(dir.path, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'keep');
    writeTranscript(join(dir.path, 'elsewhere', 'session.jsonl'), {
      sessionId: 'a1b2c3d4-0000-4000-8000-000000000002',
      cwd: '/nonexistent/project',
      prompt: 'hello',
      steps: [],
      answer: 'hi',
    });
    const absent = await run(
      ['replay', join(dir.path, 'elsewhere'), '--out', join(dir.path, 'p.jsonl'), '--force'],
      { env },
    );
    expect(absent.exitCode).toBe(0);
    expect(absent.stdout).toContain('side effects not checked: no directory to watch (add --watch DIR)');
    expect(absent.stdout).toContain('not on this machine, not checked: /nonexistent/project');

    const watched = await run(
      [
        'replay',
        join(dir.path, 'elsewhere'),
        '--watch',
        other,
        '--out',
        join(dir.path, 'p.jsonl'),
        '--force',
        '--json',
      ],
      { env },
    );
    expect(watched.exitCode).toBe(0);
    const output = JSON.parse(watched.stdout);
    expect(output.sideEffects).toMatchObject({
      checked: true,
      roots: [other],
      absentCwds: ['/nonexistent/project'],
    });

    const missing = await replay(['--watch', join(dir.path, 'nope')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('no such directory');
  });
});
