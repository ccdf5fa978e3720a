// Issue 17: `replay --agent codex` runs the real Codex CLI (the pinned @openai/codex 0.169.0) with every tool
// call denied by its PreToolUse hook and answered from the recording through our Responses-wire proxy.
// 1. A recorded session that would `touch` a marker and add a file with apply_patch: nothing is made, and every
//    request the model receives carries the recorded outputs in place of Codex's "blocked" text.
// 2. The real 0.169 thread (test/fixtures/real/codex-0.169.0): every step Codex takes is the recorded one, the
//    compaction is made where it was, and every output the model is shown is the one it was shown then.
// 3. A Codex whose hook is not trusted fails the probe: the replay refuses before anything runs.
// 4. SIGKILL of the replay stops Codex too; the pairs stay whole.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCodex } from '../../src/drivers/codex/binary.js';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { writeRollout } from '../helpers/codex-rollout.js';
import { startModelServer } from '../helpers/model-server.js';
import { alive, descendants } from '../helpers/processes.js';

interface Item {
  type: string;
  call_id?: string;
  output?: unknown;
  [key: string]: unknown;
}
interface PairLine {
  session: string;
  turn: number;
  mode: string;
  match: { tool_calls: string };
  sources: unknown;
  completion: { tool_calls?: { function: { name: string; arguments: string } }[] };
  wire: { api: string; source: string; body: { input: Item[]; tools: { name?: string; type: string }[] } };
}

const pairsOf = (file: string): PairLine[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PairLine);

const outputs = (input: Item[]) =>
  new Map(input.filter((item) => /_call_output$/.test(item.type)).map((item) => [item.call_id, item.output]));

let dir: ReturnType<typeof tempDir>;
let db: string;
let ws: string;
let marker: string;
const patch = '*** Begin Patch\n*** Add File: NOTES.md\n+notes\n*** End Patch\n';
const touched = 'Chunk ID: 1a2b3c\nWall time: 0.0100 seconds\nProcess exited with code 0\nOutput:\n';
const patched = 'Success. Updated the following files:\nA NOTES.md\n';

beforeAll(async () => {
  dir = tempDir('codex-driver-');
  ws = join(dir.path, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'keep.txt'), 'kept\n');
  marker = join(ws, 'marker');
  writeRollout(join(dir.path, 'sessions'), {
    id: '01a2b3c4-0000-7000-8000-000000000017',
    cwd: ws,
    prompt: 'Make the marker and add NOTES.md.',
    steps: [
      {
        calls: [
          { id: 'call_touch', name: 'exec_command', arguments: { cmd: `touch ${marker}` }, output: touched },
          { id: 'call_patch', name: 'apply_patch', input: patch, output: patched },
        ],
      },
    ],
    answer: 'Made the marker and NOTES.md.',
  });
  db = join(dir.path, 'store.db');
  expect((await run(['ingest', join(dir.path, 'sessions'), '--db', db])).exitCode).toBe(0);
}, 60_000);
afterAll(() => dir?.remove());

describe('replay --agent codex --model recorded', () => {
  it('runs Codex with every call denied and answered from the recording: nothing made, the outputs in place', async () => {
    const out = join(dir.path, 'recorded.jsonl');
    const replayed = await run(['replay', '01a2b3c4', '--agent', 'codex', '--db', db, '--out', out]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(replayed.stderr).toMatch(/codex: 0\.169\.0 at /);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(ws)).toEqual(['keep.txt']);
    const pairs = pairsOf(out);
    expect(pairs.map((pair) => [pair.turn, pair.mode, pair.match.tool_calls])).toEqual([
      [1, 'free', 'exact'],
      [2, 'free', 'none'],
    ]);
    expect(pairs[0]?.sources).toEqual({ system: 'agent', tools: 'agent' });
    expect(pairs[0]?.completion.tool_calls?.map((call) => call.function.name)).toEqual([
      'exec_command',
      'apply_patch',
    ]);
    // The second request: Codex's own items, with the recorded outputs where the hook's text was.
    const second = pairs[1]?.wire;
    expect(second?.api).toBe('openai-responses');
    expect(second?.source).toBe('agent');
    const shown = outputs(second?.body.input ?? []);
    expect(shown.get('call_touch')).toBe(touched);
    expect(shown.get('call_patch')).toBe(patched);
    expect(JSON.stringify(second?.body.input)).not.toContain('blocked by PreToolUse hook');
    // Codex's own tools, apply_patch free-form among them.
    const tools = second?.body.tools ?? [];
    expect(tools.find((tool) => tool.name === 'apply_patch')?.type).toBe('custom');
    expect(tools.map((tool) => tool.name)).toContain('exec_command');
  }, 120_000);
});

describe('replay --agent codex --model responses:…', () => {
  it('sends every request to the model with the recorded outputs in place, under the upstream key only', async () => {
    const server = await startModelServer({
      turns: [
        {
          toolCalls: [
            { id: 'call_live_touch', name: 'exec_command', arguments: { cmd: `touch ${marker}` } },
            { id: 'call_live_patch', name: 'apply_patch', arguments: patch, custom: true },
          ],
        },
        { text: 'Done.' },
      ],
    });
    try {
      const out = join(dir.path, 'live.jsonl');
      const replayed = await run(
        [
          'replay',
          '01a2b3c4',
          '--agent',
          'codex',
          '--model',
          'responses:scripted-live',
          '--base-url',
          server.baseURL,
          '--db',
          db,
          '--out',
          out,
        ],
        { env: { OPENAI_API_KEY: 'sk-upstream-key-for-codex' } },
      );
      expect(replayed.exitCode, replayed.stderr).toBe(0);
      const requests = server.chatRequests();
      expect(requests).toHaveLength(2);
      for (const request of requests) {
        expect(request.path).toBe('/v1/responses');
        expect(request.headers.authorization).toBe('Bearer sk-upstream-key-for-codex');
        expect(request.body?.model).toBe('scripted-live');
      }
      const input = (requests[1]?.body?.input ?? []) as Item[];
      const shown = outputs(input);
      expect(shown.get('call_live_touch')).toBe(touched);
      expect(shown.get('call_live_patch')).toBe(patched);
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ws)).toEqual(['keep.txt']);
      expect(pairsOf(out).map((pair) => pair.match.tool_calls)).toEqual(['exact', 'none']);
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('replay --agent codex of the real 0.169 thread', () => {
  it('takes every recorded step, compacts where Codex did, and shows the model every output it was shown', async () => {
    const fixture = join(root, 'test/fixtures/real/codex-0.169.0');
    const store = join(dir.path, 'real.db');
    expect((await run(['ingest', join(fixture, 'sessions'), '--db', store])).exitCode).toBe(0);
    const demo = join(dir.path, 'demo-app');
    mkdirSync(demo);
    writeFileSync(join(demo, 'hello.py'), 'print("Helo, wrld")\n');
    writeFileSync(join(demo, 'notes.txt'), 'notes\n');
    const out = join(dir.path, 'real.jsonl');
    const replayed = await run([
      'replay',
      '01a23320-421e',
      '--agent',
      'codex',
      '--workspace',
      demo,
      // The recording's model_auto_compact_token_limit.
      '--context-limit',
      '100000',
      '--db',
      store,
      '--out',
      out,
    ]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(readdirSync(demo).sort()).toEqual(['hello.py', 'notes.txt']);
    const pairs = pairsOf(out);
    expect(pairs).toHaveLength(14);
    expect(pairs.every((pair) => ['exact', 'none'].includes(pair.match.tool_calls))).toBe(true);
    // Every output the recorded requests carried for a call, the replayed request carries for it.
    const logged = readFileSync(join(fixture, 'requests-main.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(JSON.parse(line).body_raw) as { input: Item[]; tools: unknown[] })
      .filter((body) => body.tools.length > 0);
    const recorded = new Map<unknown, unknown>();
    for (const body of logged) for (const [id, output] of outputs(body.input)) recorded.set(id, output);
    let compared = 0;
    for (const pair of pairs)
      for (const [id, output] of outputs(pair.wire.body.input)) {
        if (!recorded.has(id)) continue;
        expect(output, String(id)).toEqual(recorded.get(id));
        compared++;
      }
    expect(compared).toBeGreaterThanOrEqual(13);
    // After the compaction the model sees the summary, not the whole history: as when it was recorded.
    const sizes = pairs.map((pair) => pair.wire.body.input.length);
    expect(sizes[7]).toBeLessThan(sizes[6] as number);
    expect(JSON.stringify(pairs[7]?.wire.body.input)).toContain('compaction');
  }, 180_000);
});

describe('replay --agent codex of the sample sessions: Claude Code’s and opencode’s', () => {
  it('answers every call the recording holds, their shell commands made exec_command, nothing run', async () => {
    const store = join(dir.path, 'samples.db');
    expect((await run(['ingest', join(root, 'sample-sessions'), '--db', store])).exitCode).toBe(0);
    const todo = join(dir.path, 'todo-api');
    mkdirSync(todo);
    const out = join(dir.path, 'samples.jsonl');
    const replayed = await run([
      'replay',
      '--all',
      '--agent',
      'codex',
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
    expect(report).toMatchObject({ driver: 'codex', turnsFailed: 0, recall: 1, precision: 1 });
    // The one miss: the recorded `npm test` that never got a result (the session was cut off).
    expect(report.misses).toBe(1);
    // Stored with the turn that made it.
    const shown = JSON.parse(
      (await run(['runs', (JSON.parse(replayed.stdout) as { id: string }).id, '--db', store, '--json']))
        .stdout,
    ) as { missList: { turn: number; sessionId: string; call: { input: unknown } }[] };
    const [miss] = shown.missList;
    const making = pairsOf(out).find(
      (pair) =>
        pair.session === miss?.sessionId &&
        pair.completion.tool_calls?.some(
          (call) => call.function.arguments === JSON.stringify(miss?.call.input),
        ),
    );
    expect(miss?.turn).toBe(making?.turn);
    expect(report.matches.differs).toBe(0);
    expect(readdirSync(todo)).toEqual([]);
    const pairs = pairsOf(out);
    const agents = new Set(pairs.map((pair) => (pair as unknown as { agent: string }).agent));
    expect(agents).toEqual(new Set(['claude-code', 'opencode']));
    // Codex's own calls in the completions, its own tools in the requests.
    const names = new Set(
      pairs.flatMap((pair) => pair.completion.tool_calls?.map((call) => call.function.name) ?? []),
    );
    expect(names.has('exec_command')).toBe(true);
    expect(names.has('Bash') || names.has('bash')).toBe(false);
    expect(pairs.every((pair) => pair.wire.body.tools.some((tool) => tool.name === 'exec_command'))).toBe(
      true,
    );
  }, 180_000);
});

describe('replay --agent codex with a Codex that does not run its hook', () => {
  it('fails the probe and refuses before anything runs: exit 2, no run, nothing made', async () => {
    const real = findCodex().path;
    // A codex that drops the trust flag: its hook is then skipped silently, and every tool would run.
    const wrapper = join(dir.path, 'codex-untrusted');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nfor arg; do shift; [ "$arg" = --dangerously-bypass-hook-trust ] || set -- "$@" "$arg"; done\nexec ${JSON.stringify(real)} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const out = join(dir.path, 'untrusted.jsonl');
    const replayed = await run([
      'replay',
      '01a2b3c4',
      '--agent',
      'codex',
      '--codex-bin',
      wrapper,
      '--db',
      db,
      '--out',
      out,
    ]);
    expect(replayed.exitCode).toBe(2);
    expect(replayed.stderr).toContain('its PreToolUse deny hook is not live');
    expect(replayed.stderr).toContain('the probe call was not stopped by the deny hook');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    const runs = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as { driver?: string }[];
    expect(runs.filter((entry) => entry.driver === 'codex')).toHaveLength(2);
  }, 120_000);
});

describe('replay --agent codex killed with SIGKILL mid-run', () => {
  it('stops Codex too, with nothing run and the pairs whole', async () => {
    const server = await startModelServer({
      turns: [
        {
          toolCalls: [{ id: 'call_live_touch', name: 'exec_command', arguments: { cmd: `touch ${marker}` } }],
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
          '01a2b3c4',
          '--agent',
          'codex',
          '--model',
          'responses:scripted-live',
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
        if (waited > 120_000) throw new Error('Codex never asked a second time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const codexes = descendants(pid, 'codex');
      expect(codexes.length).toBeGreaterThan(0);
      process.kill(pid, 'SIGKILL');
      await child;
      // The watchdog stops Codex within seconds (it checks every second, then TERM, then KILL).
      for (let waited = 0; codexes.some(alive); waited += 100) {
        if (waited > 30_000) throw new Error(`Codex still runs: ${codexes.filter(alive).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ws)).toEqual(['keep.txt']);
      // The first step's pair was written whole before the kill.
      const pairs = pairsOf(out);
      expect(pairs.map((pair) => pair.turn)).toEqual([1]);
    } finally {
      await server.close();
    }
  }, 180_000);
});
