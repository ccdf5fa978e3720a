// `replay --agent opencode` end to end, around the workspace: a git repository, the project's AGENTS.md, an
// image in the prompt, and an opencode that writes something itself (the checker, --sandbox). The first half
// is opencode-replay.test.ts; the two are one file's worth of tests split so that two workers share them.
// None of these is about the session's length: they replay the short cut of the sample (writeShortSample: one
// prompt, an edit, a command and the answer), not its twelve steps over three prompts.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { prepareEnvironment } from '../../src/drivers/opencode/environment.js';
import { run } from '../helpers/cli.js';
import { contentText, startModelServer } from '../helpers/model-server.js';
import { opencodeBinary } from '../helpers/opencode.js';
import {
  dir,
  readPairs,
  recordedReplay,
  scripted,
  shortId,
  shortSteps,
  snapshot,
  stepRequests,
  titleResponder,
  useSample,
  workspace,
} from '../helpers/opencode-sample.js';
import { prompts } from '../helpers/opencode-scenario.js';

useSample('opencode-replay-ws-');

const gitWorks = spawnSync('git', ['--version']).status === 0;

describe.runIf(gitWorks)('replay --agent opencode in a git repository', () => {
  it("leaves the repository alone: opencode's project-id write lands in a private view of .git", async () => {
    const ws = workspace('ws-git');
    const git = (...args: string[]) => {
      const done = spawnSync('git', [
        '-C',
        ws,
        '-c',
        'user.email=ada@example.com',
        '-c',
        'user.name=Ada',
        ...args,
      ]);
      expect(done.status).toBe(0);
    };
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'init');
    // A user who ran opencode here before has its cache file: opencode rewrites it on every run.
    writeFileSync(join(ws, '.git', 'opencode'), 'previous-id');
    const before = snapshot(ws);
    const out = join(dir.path, 'git.jsonl');
    // The recorded model: no server needed.
    const result = await run([...recordedReplay(ws, out, shortId), '--json']);
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { turnsDone: number; sideEffects: { changes: unknown[] } };
    expect(shortSteps.flat()).toHaveLength(3);
    expect(report.turnsDone).toBe(3);
    expect(report.sideEffects.changes).toEqual([]);
    // Every file under the workspace, .git included, as it was.
    expect(snapshot(ws)).toEqual(before);
    // opencode still knows it is in a git repository: the prompt says so, as it would for the user.
    const [first] = readPairs(out);
    expect(String(first?.messages[0]?.content)).toContain('Is directory a git repo: yes');
  });
});

describe("replay --agent opencode with the project's AGENTS.md", () => {
  it('gives opencode the system prompt the user gets: project instructions in, project config still off', async () => {
    const ws = workspace('ws-agents');
    writeFileSync(join(ws, 'AGENTS.md'), '# Rules\n\nAlways run the tests before saying done.\n');
    const out = join(dir.path, 'agents.jsonl');
    const result = await run([...recordedReplay(ws, out, shortId)]);
    expect(result.exitCode).toBe(0);
    const [first] = readPairs(out);
    const system = first?.messages.filter((m) => m.role === 'system').map((m) => m.content);
    expect(JSON.stringify(system)).toContain('Always run the tests before saying done.');

    // The user's own opencode, project config on, in the same directory: the same system prompt.
    const server = await startModelServer({ models: ['recorded'], responders: [titleResponder] });
    const plain = prepareEnvironment({
      workspace: ws,
      baseURL: server.baseURL,
      model: 'recorded',
      plugin: false,
    });
    try {
      server.push({ text: 'hello' });
      const { OPENCODE_DISABLE_PROJECT_CONFIG: _, ...own } = plain.env;
      const child = await execa(opencodeBinary(), ['run', '--format', 'json', '--model', 'replay/recorded'], {
        cwd: ws,
        env: own,
        extendEnv: false,
        input: prompts.fix,
        reject: false,
        timeout: 90_000,
        forceKillAfterDelay: 2_000,
      });
      expect(child.exitCode).toBe(0);
      const theirs = stepRequests(server)[0]
        ?.body?.messages?.filter((m) => m.role === 'system')
        .map((m) => m.content);
      expect(system).toEqual(theirs);
    } finally {
      plain.cleanup();
      await server.close();
    }
  });
});

describe('replay --agent opencode with an image in the prompt', () => {
  it('passes the screenshot to opencode as a file, and its model is shown it', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const ws = workspace('ws-image');
    const before = snapshot(ws);
    const id = '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
    const file = join(dir.path, 'image-project', `${id}.jsonl`);
    mkdirSync(join(dir.path, 'image-project'), { recursive: true });
    const base = { sessionId: id, cwd: ws, version: '2.1.38', userType: 'external', isSidechain: false };
    writeFileSync(
      file,
      [
        {
          ...base,
          type: 'user',
          uuid: 'u1',
          parentUuid: null,
          timestamp: '2026-01-01T10:00:00.000Z',
          message: {
            role: 'user',
            content: [
              { type: 'text', text: 'What is wrong in this screenshot?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
            ],
          },
        },
        {
          ...base,
          type: 'assistant',
          uuid: 'a1',
          parentUuid: 'u1',
          timestamp: '2026-01-01T10:00:01.000Z',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet-4-5',
            content: [{ type: 'text', text: 'The button label has a typo.' }],
            usage: { input_tokens: 10, output_tokens: 8 },
          },
        },
      ]
        .map((line) => `${JSON.stringify(line)}\n`)
        .join(''),
    );
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    try {
      server.push({ text: 'The label is misspelled.' });
      const result = await run([
        'replay',
        file,
        '--db',
        join(dir.path, 'image.db'),
        '--agent',
        'opencode',
        '--model',
        'openai:scripted',
        '--base-url',
        server.baseURL,
        '--out',
        join(dir.path, 'image.jsonl'),
        '--json',
      ]);
      expect(result.exitCode).toBe(0);
      const [step] = stepRequests(server);
      const user = step?.body?.messages?.find((m) => m.role === 'user');
      expect(contentText(user?.content)).toContain('What is wrong in this screenshot?');
      expect(JSON.stringify(user?.content)).toContain(png);
      // The attachment went into replay-history's private tree, not the workspace.
      expect(snapshot(ws)).toEqual(before);
    } finally {
      await server.close();
    }
  });
});

/** An opencode that first writes into its workspace: something other than a tool, which the checker must catch. */
function intruder(): string {
  const path = join(dir.path, 'opencode-intruder');
  writeFileSync(
    path,
    // On every start of opencode, whichever way the driver starts it (`opencode run`, or `opencode serve`).
    `#!/bin/sh\ncase "$1" in run|serve) echo intruder > "$PWD/intruder.txt" 2>/dev/null || echo "write refused" >&2;; esac\nexec ${opencodeBinary()} "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

const bwrapWorks = spawnSync('bwrap', ['--bind', '/', '/', '--die-with-parent', 'true']).status === 0;

describe('replay --agent opencode around something that writes', () => {
  const replayWith = async (name: string, extra: string[]) => {
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const ws = workspace(name);
    try {
      server.push(...shortSteps.flat());
      const result = await run([
        ...scripted(server, ws, join(dir.path, `${name}.jsonl`), shortId),
        '--opencode-bin',
        intruder(),
        '--json',
        ...extra,
      ]);
      return { result, ws };
    } finally {
      await server.close();
    }
  };

  it('the checker catches a write that is not a tool call: exit 3, the file named', async () => {
    const { result, ws } = await replayWith('ws-intruder', []);
    expect(result.exitCode).toBe(3);
    const report = JSON.parse(result.stdout) as {
      turnsDone: number;
      sideEffects: { changes: { kind: string; path: string }[] };
    };
    expect(report.turnsDone).toBe(3);
    expect(report.sideEffects.changes).toContainEqual(
      expect.objectContaining({ kind: 'created', path: join(ws, 'intruder.txt') }),
    );
  });

  it.runIf(bwrapWorks)(
    '--sandbox: the workspace is read-only to opencode, so the write fails and nothing changes',
    async () => {
      const { result, ws } = await replayWith('ws-sandbox', ['--sandbox']);
      expect(result.exitCode).toBe(0);
      const report = JSON.parse(result.stdout) as { turnsDone: number; sideEffects: { changes: unknown[] } };
      expect(report.turnsDone).toBe(3);
      expect(report.sideEffects.changes).toEqual([]);
      expect(existsSync(join(ws, 'intruder.txt'))).toBe(false);
    },
    180_000,
  );

  it.runIf(!bwrapWorks)(
    '--sandbox where bubblewrap cannot run: exit 2 before anything starts',
    async () => {
      const { result } = await replayWith('ws-nosandbox', ['--sandbox']);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/bubblewrap/);
    },
    60_000,
  );
});
