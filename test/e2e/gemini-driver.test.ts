// `replay --agent gemini` runs the real Gemini CLI (the pinned @google/gemini-cli 0.61.0) with every tool call
// denied by its BeforeTool hook and answered from the recording through our Gemini-wire proxy.
// 1. A recorded session (two prompts) that would `touch` a marker and write a file: nothing is made, and every
//    request the model receives carries the recorded results in place of the blocked ones, one pair per step.
// 2. The same against a live model (gemini:…): the requests reach it on the Gemini wire with the recorded
//    results in place, under the upstream key only.
// 3. The real 0.61.0 session of the fixture: every step taken, the compression answered with the recorded
//    summary, every result the model was shown shown again.
// 4. A Gemini whose hook fails (a hook that exits 1) fails the probe: the replay refuses before anything runs.
// 5. A workspace with its own .gemini/settings.json (hooks, an MCP server) is not replayed: none of it runs.
// 6. SIGKILL of the replay stops Gemini too; the pairs stay whole.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findGemini } from '../../src/drivers/gemini/binary.js';
import { denyReason } from '../../src/drivers/gemini/environment.js';
import { type GeminiRequest, responseText } from '../../src/drivers/wire/gemini.js';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { writeGeminiSession } from '../helpers/gemini-session.js';
import { contentText, type RecordedRequest, startModelServer } from '../helpers/model-server.js';
import {
  type ChatMessage,
  type ChatPairLine,
  demoWorkspace,
  pairsOf as pairsOfFile,
} from '../helpers/pairs.js';
import { alive, descendants } from '../helpers/processes.js';

type Message = ChatMessage;
type PairLine = ChatPairLine;
const pairsOf = (file: string) => pairsOfFile<PairLine>(file);

/**
 * The results a pair's request carried, by the name of the call each answers (the proxy names every call
 * `rh_N`: the Gemini API gives calls no ids). Several calls of one name: the last one's.
 */
const results = (messages: Message[]) => {
  const names = new Map<string, string>();
  for (const message of messages)
    for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  return new Map(
    messages
      .filter((m) => m.role === 'tool')
      .map((m) => [names.get(m.tool_call_id ?? '') ?? m.tool_call_id, contentText(m.content)]),
  );
};

/** The results a Gemini request carried, by the function's name (the live model names no calls). */
const sentResults = (body: GeminiRequest) => {
  const sent = new Map<string, string>();
  for (const content of body.contents ?? [])
    for (const part of content.parts ?? [])
      if (part.functionResponse?.name)
        sent.set(part.functionResponse.name, responseText(part.functionResponse.response));
  return sent;
};

/** Agent steps: requests that offer tools (the CLI's side calls — router, summarizer, title — offer none). */
const steps = (requests: RecordedRequest[]) =>
  requests.filter((request) => Array.isArray((request.body as GeminiRequest | undefined)?.tools));

/** The Gemini API's root (the scripted server's base URL is OpenAI's, under /v1). */
const geminiBase = (baseURL: string) => baseURL.replace(/\/v1$/, '');

let dir: ReturnType<typeof tempDir>;
let db: string;
let ws: string;
let marker: string;
let written: string;
const touched = 'Output: (empty)\nProcess Group PGID: 4242';
const wrote = 'Successfully created and wrote to new file: NOTES.md.';
const readBack = 'notes from the recording\n';

beforeAll(async () => {
  dir = tempDir('gemini-driver-');
  ws = join(dir.path, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'keep.txt'), 'kept\n');
  marker = join(ws, 'marker');
  written = join(ws, 'NOTES.md');
  const home = join(dir.path, 'home');
  writeGeminiSession(home, {
    id: 'b1b2c3d4-0000-4000-8000-000000000018',
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
  const ingested = await run(['ingest', join(home, '.gemini', 'tmp'), '--db', db]);
  expect(ingested.exitCode, ingested.stderr).toBe(0);
}, 60_000);
afterAll(() => dir?.remove());

describe('replay --agent gemini --model recorded', () => {
  it('runs Gemini CLI with every call denied and answered from the recording: nothing made, the results in place', async () => {
    const out = join(dir.path, 'recorded.jsonl');
    const replayed = await run(['replay', 'b1b2c3d4', '--agent', 'gemini', '--db', db, '--out', out]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(replayed.stderr).toMatch(/gemini: 0\.61\.0 at /);
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
    expect(pairs.every((pair) => pair.model === 'recorded' && pair.agent === 'gemini')).toBe(true);
    expect(pairs[0]?.sources).toEqual({ system: 'agent', tools: 'agent' });
    expect(pairs[0]?.completion.tool_calls?.map((call) => call.function.name)).toEqual([
      'run_shell_command',
      'write_file',
    ]);
    // Gemini CLI's own system instruction and tools, as it sent them.
    expect(pairs[0]?.messages[0]?.role).toBe('system');
    expect(contentText(pairs[0]?.messages[0]?.content)).toMatch(/Gemini CLI/);
    expect(pairs[0]?.tools.map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['run_shell_command', 'write_file', 'read_file', 'replace']),
    );
    // Every later request: the recorded results where the CLI had "Tool execution blocked".
    for (const pair of pairs.slice(1)) {
      const shown = results(pair.messages);
      expect(shown.get('run_shell_command')).toBe(touched);
      expect(shown.get('write_file')).toBe(wrote);
      expect(JSON.stringify(pair.messages)).not.toContain(denyReason);
    }
    expect(results(pairs[3]?.messages ?? []).get('read_file')).toBe(readBack);
    // The second prompt resumed the first one's session: its history is there.
    const said = (pairs[2]?.messages ?? [])
      .filter((m) => m.role === 'user')
      .map((m) => contentText(m.content));
    expect(said.some((text) => text.endsWith('Make the marker and write NOTES.md.'))).toBe(true);
    expect(said.some((text) => text.endsWith('Read NOTES.md back.'))).toBe(true);
  }, 180_000);
});

describe('replay --agent gemini --model gemini:…', () => {
  it('sends every request to the model on the Gemini wire with the recorded results in place, its key only', async () => {
    const server = await startModelServer({
      responders: [
        // Side calls (the title, a summary) offer no tools: answered, never a turn.
        (request) => (Array.isArray((request as GeminiRequest).tools) ? undefined : { text: 'A title.' }),
      ],
      turns: [
        {
          toolCalls: [
            { name: 'run_shell_command', arguments: { command: `touch ${marker}` } },
            { name: 'write_file', arguments: { file_path: written, content: 'notes\n' } },
          ],
        },
        { text: 'Done.' },
        { toolCalls: [{ name: 'read_file', arguments: { file_path: written } }] },
        { text: 'It says: notes from the recording.' },
      ],
    });
    try {
      const out = join(dir.path, 'live.jsonl');
      const replayed = await run(
        [
          'replay',
          'b1b2c3d4',
          '--agent',
          'gemini',
          '--model',
          'gemini:scripted-live',
          '--base-url',
          geminiBase(server.baseURL),
          '--db',
          db,
          '--out',
          out,
        ],
        { env: { GEMINI_API_KEY: 'upstream-key-for-gemini' } },
      );
      expect(replayed.exitCode, replayed.stderr).toBe(0);
      const requests = steps(server.chatRequests());
      expect(requests).toHaveLength(4);
      for (const request of requests) {
        expect(request.path).toBe('/v1beta/models/scripted-live:streamGenerateContent');
        expect(request.headers['x-goog-api-key']).toBe('upstream-key-for-gemini');
      }
      for (const request of requests.slice(1)) {
        const shown = sentResults(request.body as GeminiRequest);
        expect(shown.get('run_shell_command')).toBe(touched);
        expect(shown.get('write_file')).toBe(wrote);
        expect(JSON.stringify(request.body)).not.toContain(denyReason);
      }
      expect(sentResults(requests[3]?.body as GeminiRequest).get('read_file')).toBe(readBack);
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ws)).toEqual(['keep.txt']);
      expect(pairsOf(out).map((pair) => pair.match.tool_calls)).toEqual(['exact', 'none', 'exact', 'none']);
    } finally {
      await server.close();
    }
  }, 180_000);
});

describe('replay --agent gemini of the real 0.61.0 session', () => {
  it('takes every recorded step, compresses through the recorded summary, and shows every result it was shown', async () => {
    const fixture = join(root, 'test/fixtures/real/gemini-cli-0.61.0');
    const store = join(dir.path, 'real.db');
    expect((await run(['ingest', join(fixture, 'home/.gemini/tmp'), '--db', store])).exitCode).toBe(0);
    // The script only makes a folder under a `projects/` one (it removes what is there first).
    const demo = join(dir.path, 'projects', 'demo-app');
    await demoWorkspace(demo);
    const before = readdirSync(demo).sort();
    const out = join(dir.path, 'real.jsonl');
    const replayed = await run([
      'replay',
      '9c1bacd1',
      '--agent',
      'gemini',
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
    // hello.txt and the friendlier greeting were recorded; neither is made.
    expect(readdirSync(demo).sort()).toEqual(before);
    expect(existsSync(join(demo, 'hello.txt'))).toBe(false);
    const pairs = pairsOf(out);
    expect(pairs.every((pair) => ['exact', 'none'].includes(pair.match.tool_calls))).toBe(true);
    // The results the model was shown are the ones it was shown when recorded: the same texts (the CLI's own
    // call ids differ from the proxy's, so texts are compared, not ids; a resumed run sends earlier results
    // twice, then as now).
    const recorded = new Set<string>();
    for (const line of readFileSync(join(fixture, 'requests.jsonl'), 'utf8').trim().split('\n')) {
      const entry = JSON.parse(line) as { seq: number; body: string | GeminiRequest };
      // Requests 7–22 are this session's (runs 02–04 of the fixture's SOURCES.md; 1–6 are another session's).
      if (entry.seq < 7) continue;
      const body = (typeof entry.body === 'string' ? JSON.parse(entry.body) : entry.body) as GeminiRequest;
      if (!Array.isArray(body.tools)) continue;
      for (const content of body.contents ?? [])
        for (const part of content.parts ?? [])
          if (part.functionResponse) recorded.add(responseText(part.functionResponse.response));
    }
    const replayedResults = new Set<string>();
    for (const pair of pairs)
      for (const message of pair.messages)
        if (message.role === 'tool') replayedResults.add(contentText(message.content));
    expect(recorded.size).toBeGreaterThanOrEqual(10);
    expect([...replayedResults].sort()).toEqual([...recorded].sort());
    expect(JSON.stringify(pairs)).not.toContain(denyReason);
    // The recorded usage (900000 prompt tokens) makes the CLI compress where it did: the history starts anew
    // from the recorded <state_snapshot>.
    const snapshot = pairs.findIndex((pair) => JSON.stringify(pair.messages).includes('<state_snapshot>'));
    expect(snapshot).toBeGreaterThan(0);
    expect(pairs[snapshot]?.messages.length).toBeLessThan(pairs[snapshot - 1]?.messages.length as number);
  }, 240_000);
});

describe('replay --agent gemini of other agents’ sessions', () => {
  const replayAll = async (store: string, workspace: string, ids: string[]) => {
    const out = join(dir.path, `others-${ids.join('-') || 'all'}.jsonl`);
    const replayed = await run([
      'replay',
      ...(ids.length > 0 ? ids : ['--all']),
      '--agent',
      'gemini',
      '--workspace',
      workspace,
      '--db',
      store,
      '--out',
      out,
      '--json',
    ]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    return {
      report: JSON.parse(replayed.stdout) as {
        driver: string;
        turnsDone: number;
        turnsFailed: number;
        recall: number;
        precision: number;
        misses: number;
        matches: Record<string, number>;
      },
      pairs: pairsOf(out),
    };
  };

  it('takes the real Qwen Code session call for call (Qwen Code kept Gemini CLI’s tools), nothing run', async () => {
    const store = join(dir.path, 'qwen.db');
    const fixture = join(root, 'test/fixtures/real/qwen-code-0.24.4/home/.qwen/projects');
    expect((await run(['ingest', fixture, '--db', store])).exitCode).toBe(0);
    const demo = join(dir.path, 'qwen', 'projects', 'demo-app');
    await demoWorkspace(demo);
    const before = readdirSync(demo).sort();
    const { report, pairs } = await replayAll(store, demo, ['a433a22d']);
    expect(report).toMatchObject({
      driver: 'gemini',
      turnsDone: 9,
      turnsFailed: 0,
      recall: 1,
      precision: 1,
      misses: 0,
    });
    expect(readdirSync(demo).sort()).toEqual(before);
    expect(new Set(pairs.map((pair) => pair.agent))).toEqual(new Set(['qwen']));
    expect(pairs.every((pair) => pair.tools.some((tool) => tool.function.name === 'replace'))).toBe(true);
  }, 240_000);

  it('answers every call of the sample sessions (Claude Code’s, opencode’s), their shell commands made run_shell_command', async () => {
    const store = join(dir.path, 'samples.db');
    expect((await run(['ingest', join(root, 'sample-sessions'), '--db', store])).exitCode).toBe(0);
    const todo = join(dir.path, 'todo-api');
    mkdirSync(todo);
    const { report, pairs } = await replayAll(store, todo, []);
    expect(report).toMatchObject({ driver: 'gemini', turnsFailed: 0, recall: 1, precision: 1 });
    // The one miss: the recorded `npm test` that never got a result (the session was cut off).
    expect(report.misses).toBe(1);
    expect(report.matches.differs).toBe(0);
    expect(readdirSync(todo)).toEqual([]);
    expect(new Set(pairs.map((pair) => pair.agent))).toEqual(new Set(['claude-code', 'opencode']));
    const names = new Set(
      pairs.flatMap((pair) => pair.completion.tool_calls?.map((call) => call.function.name) ?? []),
    );
    expect(names.has('run_shell_command')).toBe(true);
    expect(names.has('Bash') || names.has('bash')).toBe(false);
  }, 240_000);
});

/** Whether bubblewrap can run here (--sandbox): `.ci/run` installs it where it can. */
const bwrapWorks = spawnSync('bwrap', ['--bind', '/', '/', '--die-with-parent', 'true']).status === 0;

describe.skipIf(!bwrapWorks)('replay --agent gemini --sandbox', () => {
  it('runs Gemini CLI under bubblewrap with the workspace read-only: every step taken, nothing made', async () => {
    const out = join(dir.path, 'sandboxed.jsonl');
    const replayed = await run([
      'replay',
      'b1b2c3d4',
      '--agent',
      'gemini',
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

describe('replay --agent gemini with a Gemini CLI whose hook fails', () => {
  it('fails the probe and refuses before anything runs: exit 2, no run, nothing made', async () => {
    const real = findGemini().path;
    // A gemini whose settings' hook is replaced by one that exits 1: the CLI then runs the tool (it fails open).
    const failing = join(dir.path, 'failing-hook.sh');
    writeFileSync(failing, '#!/bin/sh\ncat >/dev/null\nexit 1\n');
    chmodSync(failing, 0o755);
    const wrapper = join(dir.path, 'gemini-failing-hook');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nsed -i 's#"command": "[^"]*deny-every-tool.sh"#"command": "${failing}"#' "$HOME/.gemini/settings.json"\nexec ${JSON.stringify(real)} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const out = join(dir.path, 'failing.jsonl');
    const replayed = await run(
      ['replay', 'b1b2c3d4', '--agent', 'gemini', '--gemini-bin', wrapper, '--db', db, '--out', out],
      { env: { XDG_CACHE_HOME: join(dir.path, 'cache') } },
    );
    expect(replayed.exitCode, replayed.stderr).toBe(2);
    expect(replayed.stderr).toContain('its BeforeTool deny hook is not live');
    expect(replayed.stderr).toContain('the probe command ran');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(ws)).toEqual(['keep.txt']);
  }, 120_000);
});

describe('replay --agent gemini in a workspace with its own .gemini/settings.json', () => {
  it('does not replay it: its hooks and MCP server never run', async () => {
    const hostile = join(dir.path, 'hostile');
    mkdirSync(join(hostile, '.gemini'), { recursive: true });
    const ran = join(dir.path, 'project-code-ran');
    writeFileSync(
      join(hostile, '.gemini', 'settings.json'),
      JSON.stringify({
        hooksConfig: { enabled: false },
        hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${ran}` }] }] },
        mcpServers: { evil: { command: '/bin/sh', args: ['-c', `touch ${ran}`] } },
      }),
    );
    const out = join(dir.path, 'hostile.jsonl');
    const replayed = await run([
      'replay',
      'b1b2c3d4',
      '--agent',
      'gemini',
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
      `not replayed: ${join(hostile, '.gemini', 'settings.json')} is Gemini CLI's project settings`,
    );
    expect(replayed.stderr).toMatch(/session 1\/1 \w+ failed/);
    expect(existsSync(ran)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(pairsOf(out)).toEqual([]);
  }, 120_000);
});

describe('replay --agent gemini killed with SIGKILL mid-run', () => {
  it('stops Gemini CLI too, with nothing run and the pairs whole', async () => {
    const server = await startModelServer({
      responders: [
        (request) => (Array.isArray((request as GeminiRequest).tools) ? undefined : { text: 'A title.' }),
      ],
      turns: [
        { toolCalls: [{ name: 'run_shell_command', arguments: { command: `touch ${marker}` } }] },
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
          'b1b2c3d4',
          '--agent',
          'gemini',
          '--model',
          'gemini:scripted-live',
          '--base-url',
          geminiBase(server.baseURL),
          '--db',
          db,
          '--out',
          out,
        ],
        { reject: false, env: { NO_COLOR: '1', GEMINI_API_KEY: 'upstream-key-for-gemini' } },
      );
      const pid = child.pid as number;
      for (let waited = 0; steps(server.chatRequests()).length < 2; waited += 50) {
        if (waited > 120_000) throw new Error('Gemini CLI never asked a second time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const geminis = [...descendants(pid, 'node'), ...descendants(pid, 'gemini')];
      expect(geminis.length).toBeGreaterThan(0);
      process.kill(pid, 'SIGKILL');
      await child;
      // The watchdog stops the CLI within seconds (it checks every second, then TERM, then KILL).
      for (let waited = 0; geminis.some(alive); waited += 100) {
        if (waited > 30_000) throw new Error(`Gemini CLI still runs: ${geminis.filter(alive).join(', ')}`);
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
