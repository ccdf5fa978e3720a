// `replay --agent qwen` runs the real Qwen Code CLI (the pinned @qwen-code/qwen-code 0.24.4) with every tool
// call denied by its PreToolUse hook and answered from the recording through our chat-completions proxy.
// 1. A recorded session (two prompts) that would `touch` a marker and write a file: nothing is made, and every
//    request the model receives carries the recorded results in place of the deny text, one pair per step.
// 2. The same against a live model (openai:…): the requests reach it with the recorded results, its key only.
// 3. A Qwen whose hook fails open (a hook that exits 1) fails the probe: the replay refuses before anything runs.
// 4. A workspace with its own .qwen/settings.json (hooks, an MCP server) is not replayed: none of it runs.
// 5. SIGKILL of the replay stops Qwen too; the pairs stay whole.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findQwen } from '../../src/drivers/qwen/binary.js';
import { denyReason } from '../../src/drivers/qwen/environment.js';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { contentText, startModelServer } from '../helpers/model-server.js';
import {
  type ChatMessage,
  type ChatPairLine,
  demoWorkspace,
  pairsOf as pairsOfFile,
} from '../helpers/pairs.js';
import { alive, descendants } from '../helpers/processes.js';
import { writeQwenSession } from '../helpers/qwen-session.js';

type Message = ChatMessage;
type PairLine = ChatPairLine;
const pairsOf = (file: string) => pairsOfFile<PairLine>(file);

const results = (messages: Message[]) =>
  new Map(messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, contentText(m.content)]));

let dir: ReturnType<typeof tempDir>;
let db: string;
let ws: string;
let marker: string;
let written: string;
const touched = `Command: touch MARKER\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: 4242`;
const wrote = 'Successfully created and wrote to new file: NOTES.';
const readBack = 'notes from the recording\n';

beforeAll(async () => {
  dir = tempDir('qwen-driver-');
  ws = join(dir.path, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'keep.txt'), 'kept\n');
  marker = join(ws, 'marker');
  written = join(ws, 'NOTES.md');
  const home = join(dir.path, 'home');
  writeQwenSession(home, {
    id: 'a1b2c3d4-0000-4000-8000-000000000018',
    cwd: ws,
    prompts: [
      {
        text: 'Make the marker and write NOTES.md.',
        steps: [
          {
            text: 'Making both.',
            calls: [
              {
                id: 'call_touch',
                name: 'run_shell_command',
                args: { command: `touch ${marker}` },
                output: touched,
              },
              {
                id: 'call_write',
                name: 'write_file',
                args: { file_path: written, content: 'notes\n' },
                output: wrote,
              },
            ],
          },
        ],
        answer: 'Made the marker and NOTES.md.',
      },
      {
        text: 'Read NOTES.md back.',
        steps: [
          { calls: [{ id: 'call_read', name: 'read_file', args: { file_path: written }, output: readBack }] },
        ],
        answer: 'It says: notes from the recording.',
      },
    ],
  });
  db = join(dir.path, 'store.db');
  const ingested = await run(['ingest', join(home, '.qwen', 'projects'), '--db', db]);
  expect(ingested.exitCode, ingested.stderr).toBe(0);
}, 60_000);
afterAll(() => dir?.remove());

describe('replay --agent qwen --model recorded', () => {
  it('runs Qwen with every call denied and answered from the recording: nothing made, the results in place', async () => {
    const out = join(dir.path, 'recorded.jsonl');
    const replayed = await run(['replay', 'a1b2c3d4', '--agent', 'qwen', '--db', db, '--out', out]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(replayed.stderr).toMatch(/qwen: 0\.24\.4 at /);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(ws)).toEqual(['keep.txt']);
    const pairs = pairsOf(out);
    // One pair per agent step: two for the first prompt, two for the second (resumed) one.
    expect(pairs.map((pair) => [pair.turn, pair.mode, pair.match.tool_calls])).toEqual([
      [1, 'free', 'exact'],
      [2, 'free', 'none'],
      [3, 'free', 'exact'],
      [4, 'free', 'none'],
    ]);
    expect(pairs.every((pair) => pair.model === 'recorded')).toBe(true);
    expect(pairs[0]?.sources).toEqual({ system: 'agent', tools: 'agent' });
    expect(pairs[0]?.completion.tool_calls?.map((call) => call.function.name)).toEqual([
      'run_shell_command',
      'write_file',
    ]);
    // Qwen's own system prompt and tools, as it sent them.
    expect(contentText(pairs[0]?.messages[0]?.content)).toMatch(/^You are Qwen Code/);
    expect(pairs[0]?.tools.map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['run_shell_command', 'write_file', 'read_file', 'edit']),
    );
    // Every later request: the recorded results where Qwen had the deny reason, by tool_call_id.
    for (const pair of pairs.slice(1)) {
      const shown = results(pair.messages);
      expect(shown.get('call_touch')).toBe(touched);
      expect(shown.get('call_write')).toBe(wrote);
      expect(JSON.stringify(pair.messages)).not.toContain(denyReason);
    }
    expect(results(pairs[3]?.messages ?? []).get('call_read')).toBe(readBack);
    // The second prompt resumed the first one's session: its history is there.
    expect(pairs[2]?.messages.filter((m) => m.role === 'user').length).toBeGreaterThanOrEqual(2);
  }, 180_000);
});

describe('replay --agent qwen --model openai:…', () => {
  it('sends every request to the model with the recorded results in place, under the upstream key only', async () => {
    const server = await startModelServer({
      responders: [
        // The memory extractor (a side call) may come after a run: answered, never a turn.
        (request) =>
          contentText(request.messages?.[0]?.content).startsWith('You are now acting as the managed memory')
            ? { text: 'Nothing to save.' }
            : undefined,
      ],
      turns: [
        {
          toolCalls: [
            { id: 'call_live_touch', name: 'run_shell_command', arguments: { command: `touch ${marker}` } },
            {
              id: 'call_live_write',
              name: 'write_file',
              arguments: { file_path: written, content: 'notes\n' },
            },
          ],
        },
        { text: 'Done.' },
        { toolCalls: [{ id: 'call_live_read', name: 'read_file', arguments: { file_path: written } }] },
        { text: 'It says: notes from the recording.' },
      ],
    });
    try {
      const out = join(dir.path, 'live.jsonl');
      const replayed = await run(
        [
          'replay',
          'a1b2c3d4',
          '--agent',
          'qwen',
          '--model',
          'openai:scripted-live',
          '--base-url',
          server.baseURL,
          '--db',
          db,
          '--out',
          out,
        ],
        { env: { OPENAI_API_KEY: 'sk-upstream-key-for-qwen' } },
      );
      expect(replayed.exitCode, replayed.stderr).toBe(0);
      const requests = server
        .chatRequests()
        .filter((r) => !contentText(r.body?.messages?.[0]?.content).startsWith('You are now acting'));
      expect(requests).toHaveLength(4);
      for (const request of requests) {
        expect(request.path).toBe('/v1/chat/completions');
        expect(request.headers.authorization).toBe('Bearer sk-upstream-key-for-qwen');
        expect(request.body?.model).toBe('scripted-live');
        expect(request.body?.stream).toBe(true);
      }
      for (const request of requests.slice(1)) {
        const shown = results((request.body?.messages ?? []) as Message[]);
        expect(shown.get('call_live_touch')).toBe(touched);
        expect(shown.get('call_live_write')).toBe(wrote);
        expect(JSON.stringify(request.body?.messages)).not.toContain(denyReason);
      }
      expect(results((requests[3]?.body?.messages ?? []) as Message[]).get('call_live_read')).toBe(readBack);
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ws)).toEqual(['keep.txt']);
      expect(pairsOf(out).map((pair) => pair.match.tool_calls)).toEqual(['exact', 'none', 'exact', 'none']);
    } finally {
      await server.close();
    }
  }, 180_000);
});

describe('replay --agent qwen of the real 0.24.4 session', () => {
  it('takes every recorded step, compresses where Qwen did, and shows the model every result it was shown', async () => {
    const fixture = join(root, 'test/fixtures/real/qwen-code-0.24.4');
    const store = join(dir.path, 'real.db');
    expect((await run(['ingest', join(fixture, 'home/.qwen/projects'), '--db', store])).exitCode).toBe(0);
    const demo = join(dir.path, 'demo-app');
    mkdirSync(join(demo, 'src'), { recursive: true });
    writeFileSync(join(demo, 'README.md'), '# Demo project\n');
    writeFileSync(join(demo, 'notes.txt'), 'TODO: friendlier greeting\n');
    writeFileSync(join(demo, 'src', 'app.py'), 'print("hello")  # TODO\n');
    const out = join(dir.path, 'real.jsonl');
    const replayed = await run([
      'replay',
      'a433a22d',
      '--agent',
      'qwen',
      '--workspace',
      demo,
      '--db',
      store,
      '--out',
      out,
      '--json',
    ]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    const report = JSON.parse(replayed.stdout) as {
      turnsDone: number;
      turnsFailed: number;
      recall: number;
      misses: number;
    };
    expect(report).toMatchObject({ turnsDone: 9, turnsFailed: 0, recall: 1, misses: 0 });
    expect(readdirSync(demo).sort()).toEqual(['README.md', 'notes.txt', 'src']);
    expect(readdirSync(join(demo, 'src'))).toEqual(['app.py']);
    const pairs = pairsOf(out);
    expect(pairs.every((pair) => ['exact', 'none'].includes(pair.match.tool_calls))).toBe(true);
    // Every result the recorded requests carried for a call, the replayed requests carry for it.
    const recorded = new Map<unknown, string>();
    for (const line of readFileSync(join(fixture, 'requests.jsonl'), 'utf8').trim().split('\n')) {
      const body = JSON.parse((JSON.parse(line) as { body: string }).body) as { messages: Message[] };
      for (const [id, text] of results(body.messages)) recorded.set(id, text);
    }
    let compared = 0;
    for (const pair of pairs)
      for (const [id, text] of results(pair.messages)) {
        if (!recorded.has(id)) continue;
        expect(text, String(id)).toBe(recorded.get(id));
        compared++;
      }
    expect(compared).toBeGreaterThanOrEqual(40);
    // The recorded usage (870000 prompt tokens) makes Qwen compress where it did: the history starts anew.
    const sizes = pairs.map((pair) => pair.messages.length);
    expect(sizes.slice(0, 7)).toEqual([2, 5, 8, 10, 13, 17, 19]);
    expect(sizes[7]).toBeLessThan(sizes[6] as number);
    expect(JSON.stringify(pairs[7]?.messages)).toContain('state_snapshot');
  }, 240_000);
});

describe('replay --agent qwen of the sample sessions: Claude Code’s and opencode’s', () => {
  it('answers every call the recording holds, their shell commands made run_shell_command, nothing run', async () => {
    const store = join(dir.path, 'samples.db');
    expect((await run(['ingest', join(root, 'sample-sessions'), '--db', store])).exitCode).toBe(0);
    const todo = join(dir.path, 'todo-api');
    mkdirSync(todo);
    const out = join(dir.path, 'samples.jsonl');
    const replayed = await run([
      'replay',
      '--all',
      '--agent',
      'qwen',
      '--workspace',
      todo,
      '--db',
      store,
      '--out',
      out,
      '--json',
    ]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    const report = JSON.parse(replayed.stdout) as {
      driver: string;
      turnsFailed: number;
      recall: number;
      precision: number;
      misses: number;
      matches: Record<string, number>;
    };
    expect(report).toMatchObject({ driver: 'qwen', turnsFailed: 0, recall: 1, precision: 1 });
    // The one miss: the recorded `npm test` that never got a result (the session was cut off).
    expect(report.misses).toBe(1);
    expect(report.matches.differs).toBe(0);
    expect(readdirSync(todo)).toEqual([]);
    const pairs = pairsOf(out);
    expect(new Set(pairs.map((pair) => (pair as unknown as { agent: string }).agent))).toEqual(
      new Set(['claude-code', 'opencode']),
    );
    const names = new Set(
      pairs.flatMap((pair) => pair.completion.tool_calls?.map((call) => call.function.name) ?? []),
    );
    expect(names.has('run_shell_command')).toBe(true);
    expect(names.has('Bash') || names.has('bash')).toBe(false);
    expect(pairs.every((pair) => pair.tools.some((tool) => tool.function.name === 'run_shell_command'))).toBe(
      true,
    );
  }, 240_000);
});

describe('replay --agent qwen of the real Gemini CLI 0.61.0 session', () => {
  it('takes it call for call (Qwen Code kept Gemini CLI’s tools), nothing run', async () => {
    const store = join(dir.path, 'gemini.db');
    const fixture = join(root, 'test/fixtures/real/gemini-cli-0.61.0');
    expect((await run(['ingest', join(fixture, 'home/.gemini/tmp'), '--db', store])).exitCode).toBe(0);
    const demo = join(dir.path, 'gemini', 'projects', 'demo-app');
    await demoWorkspace(demo);
    const before = readdirSync(demo).sort();
    const out = join(dir.path, 'gemini.jsonl');
    const replayed = await run([
      'replay',
      '9c1bacd1',
      '--agent',
      'qwen',
      '--workspace',
      demo,
      '--db',
      store,
      '--out',
      out,
      '--json',
    ]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({
      driver: 'qwen',
      turnsFailed: 0,
      recall: 1,
      precision: 1,
      misses: 0,
    });
    expect(readdirSync(demo).sort()).toEqual(before);
    expect(existsSync(join(demo, 'hello.txt'))).toBe(false);
    const pairs = pairsOf(out);
    expect(pairs.length).toBeGreaterThanOrEqual(8);
    expect(new Set(pairs.map((pair) => (pair as unknown as { agent: string }).agent))).toEqual(
      new Set(['gemini']),
    );
  }, 240_000);
});

/** Whether bubblewrap can run here (--sandbox): `.ci/run` installs it where it can. */
const bwrapWorks = spawnSync('bwrap', ['--bind', '/', '/', '--die-with-parent', 'true']).status === 0;

describe.skipIf(!bwrapWorks)('replay --agent qwen --sandbox', () => {
  it('runs Qwen under bubblewrap with the workspace read-only: every step taken, nothing made', async () => {
    const out = join(dir.path, 'sandboxed.jsonl');
    const replayed = await run([
      'replay',
      'a1b2c3d4',
      '--agent',
      'qwen',
      '--sandbox',
      '--db',
      db,
      '--out',
      out,
      '--json',
    ]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ turnsDone: 4, turnsFailed: 0, recall: 1, misses: 0 });
    expect(JSON.parse(replayed.stdout).sideEffects).toMatchObject({
      changes: [],
      copyOnWrite: {
        method: 'none',
        reason: '--sandbox: the checked directories are read-only to the agent',
      },
    });
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(ws)).toEqual(['keep.txt']);
  }, 180_000);
});

describe('replay --agent qwen with a Qwen whose hook fails', () => {
  it('fails the probe and refuses before anything runs: exit 2, no run, nothing made', async () => {
    const real = findQwen().path;
    // A qwen whose settings' hook is replaced by one that exits 1: Qwen then runs every tool (it fails open).
    const failing = join(dir.path, 'failing-hook.sh');
    writeFileSync(failing, '#!/bin/sh\ncat >/dev/null\nexit 1\n');
    chmodSync(failing, 0o755);
    const wrapper = join(dir.path, 'qwen-failing-hook');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nsed -i 's#"command": "[^"]*deny-every-tool.sh"#"command": "${failing}"#' "$QWEN_CODE_SYSTEM_SETTINGS_PATH"\nexec ${JSON.stringify(real)} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const out = join(dir.path, 'failing.jsonl');
    const replayed = await run(
      ['replay', 'a1b2c3d4', '--agent', 'qwen', '--qwen-bin', wrapper, '--db', db, '--out', out],
      { env: { XDG_CACHE_HOME: join(dir.path, 'cache') } },
    );
    expect(replayed.exitCode, replayed.stderr).toBe(2);
    expect(replayed.stderr).toContain('its PreToolUse deny hook is not live');
    expect(replayed.stderr).toContain('the probe command ran');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(ws)).toEqual(['keep.txt']);
  }, 120_000);
});

describe('replay --agent qwen in a workspace with its own .qwen/settings.json', () => {
  it('does not replay it: its hooks and MCP server never run', async () => {
    const hostile = join(dir.path, 'hostile');
    mkdirSync(join(hostile, '.qwen'), { recursive: true });
    const ran = join(dir.path, 'project-code-ran');
    writeFileSync(
      join(hostile, '.qwen', 'settings.json'),
      JSON.stringify({
        disableAllHooks: true,
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${ran}` }] }] },
        mcpServers: { evil: { command: '/bin/sh', args: ['-c', `touch ${ran}`] } },
      }),
    );
    const out = join(dir.path, 'hostile.jsonl');
    const replayed = await run([
      'replay',
      'a1b2c3d4',
      '--agent',
      'qwen',
      '--workspace',
      hostile,
      '--db',
      db,
      '--out',
      out,
      '--json',
    ]);
    // Said, and the session failed (the run itself goes on, as for a workspace that is not there).
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(replayed.stderr).toContain(
      `not replayed: ${join(hostile, '.qwen', 'settings.json')} is Qwen's project settings`,
    );
    expect(replayed.stderr).toMatch(/session 1\/1 \w+ failed/);
    expect(existsSync(ran)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(pairsOf(out)).toEqual([]);
  }, 120_000);
});

describe('replay --agent qwen killed with SIGKILL mid-run', () => {
  it('stops Qwen too, with nothing run and the pairs whole', async () => {
    const server = await startModelServer({
      turns: [
        {
          toolCalls: [
            { id: 'call_live_touch', name: 'run_shell_command', arguments: { command: `touch ${marker}` } },
          ],
        },
        { delayMs: 120_000, text: 'Done.' },
      ],
    });
    try {
      const out = join(dir.path, 'killed.jsonl');
      const child = execa(
        'node',
        [
          bin,
          'replay',
          'a1b2c3d4',
          '--agent',
          'qwen',
          '--model',
          'openai:scripted-live',
          '--base-url',
          server.baseURL,
          '--db',
          db,
          '--out',
          out,
        ],
        { reject: false, env: { NO_COLOR: '1' } },
      );
      const pid = child.pid as number;
      for (let waited = 0; server.chatRequests().length < 2; waited += 50) {
        if (waited > 120_000) throw new Error('Qwen never asked a second time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const qwens = [...descendants(pid, 'node'), ...descendants(pid, 'qwen')];
      expect(qwens.length).toBeGreaterThan(0);
      process.kill(pid, 'SIGKILL');
      await child;
      // The watchdog stops Qwen within seconds (it checks every second, then TERM, then KILL).
      for (let waited = 0; qwens.some(alive); waited += 100) {
        if (waited > 30_000) throw new Error(`Qwen still runs: ${qwens.filter(alive).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ws)).toEqual(['keep.txt']);
      // The first step's pair was written whole before the kill.
      expect(pairsOf(out).map((pair) => pair.turn)).toEqual([1]);
    } finally {
      await server.close();
    }
  }, 180_000);
});
