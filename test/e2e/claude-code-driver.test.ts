// Issue 15: `replay --agent claude-code` runs the real Claude Code (the pinned @anthropic-ai/claude-code
// 2.1.328) with every tool call denied by its hook and answered from the recording through our proxy.
// 1. The real 2.1.328 session A1–A5 (test/fixtures/real/claude-code-2.1.328): every request Claude Code sends
//    during the replay, up to the compaction the replay does not make, is the request the model received when
//    it was recorded (requests.jsonl): system, tools, messages — and the workspace is as it was.
// 2. A recorded session that would delete a file, write one and call the network: nothing happens.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import { startModelServer } from '../helpers/model-server.js';
import { alive, descendants } from '../helpers/processes.js';
import { claudeFixture as fixture, loggedRequests } from '../helpers/requests-log.js';
import { writeTranscript } from '../helpers/transcript.js';

interface Logged {
  kind: string;
  label: string;
  body: { tools: unknown[]; messages: { role: string; content: unknown }[] };
}
interface PairLine {
  session: string;
  turn: number;
  mode: string;
  sources: unknown;
  match: { tool_calls: string };
  differs_from_recording?: string[];
  wire: { source: string; body: { tools: unknown[]; messages: { role: string; content: unknown }[] } };
}

const logged: Logged[] = loggedRequests<Logged['body']>();

let dir: ReturnType<typeof tempDir>;
let db: string;
let tmp: string;

beforeAll(async () => {
  dir = tempDir('claude-driver-');
  db = join(dir.path, 'store.db');
  tmp = join(dir.path, 'tmp');
  mkdirSync(tmp);
  expect((await run(['ingest', join(fixture, 'projects'), '--db', db])).exitCode).toBe(0);
}, 60_000);
afterAll(() => dir?.remove());

/** `--agent claude-code` with the scripted server as its Anthropic-wire model. */
const live = (server: { baseURL: string }) => [
  '--agent',
  'claude-code',
  '--model',
  'anthropic:claude-live-test',
  '--base-url',
  server.baseURL.replace(/\/v1$/, ''),
];

const pairsOf = (file: string): PairLine[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PairLine);

describe('replay --agent claude-code --model recorded', () => {
  it('sends Claude Code’s model the recorded requests, with every call answered from the recording and the workspace untouched', async () => {
    const ws = join(dir.path, 'demo-app');
    mkdirSync(ws);
    writeFileSync(join(ws, 'planted.txt'), 'as it was\n');
    const before = statSync(join(ws, 'planted.txt'));
    const out = join(dir.path, 'a.jsonl');
    const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
      id: string;
      title: string;
    }[];
    const main = listed.find((session) => session.title.startsWith('[A1]'))?.id as string;
    const helper = listed.find((session) => session.title === 'Review util module')?.id as string;
    const result = await run(
      ['replay', main, '--db', db, '--agent', 'claude-code', '--workspace', ws, '--out', out, '--json'],
      { env: { TMPDIR: tmp } },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/claude: 2\.1\.328 at /);
    const report = JSON.parse(result.stdout) as { turnsDone: number; misses: number; driver?: string };
    expect(report.misses).toBe(0);

    // The recorded turns of session A, in order: A1–A3 and, after the manual compaction, A5; and those of the
    // helper A3 started (SUB1), replayed in place by Claude Code's own Agent call.
    const recorded = logged.filter((entry) => entry.kind === 'scripted' && /^A\d/.test(entry.label));
    const subRecorded = logged.filter((entry) => entry.kind === 'scripted' && entry.label.startsWith('SUB1'));
    const everyPair = pairsOf(out);
    const pairs = everyPair.filter((pair) => pair.session === main);
    const subPairs = everyPair.filter((pair) => pair.session === helper);
    expect(pairs).toHaveLength(recorded.length);
    expect(subPairs).toHaveLength(subRecorded.length);
    expect(report.turnsDone).toBe(recorded.length + subRecorded.length);
    for (const [index, entry] of subRecorded.entries()) {
      const pair = subPairs[index] as PairLine;
      const sent = pair.wire.body as PairLine['wire']['body'] & { system: { text?: string }[] };
      const { system: recordedSystem } = entry.body as unknown as { system: { text?: string }[] };
      expect(sent.tools, entry.label).toEqual(entry.body.tools);
      expect(sent.messages, entry.label).toEqual(entry.body.messages);
      expect(sent.system.slice(1), entry.label).toEqual(recordedSystem.slice(1));
      expect(pair.differs_from_recording, entry.label).toEqual([]);
    }
    for (const pair of everyPair) {
      expect(pair.mode).toBe('free');
      expect(pair.sources).toEqual({ system: 'agent', tools: 'agent' });
      expect(pair.wire.source).toBe('agent');
      expect(['exact', 'none']).toContain(pair.match.tool_calls);
    }
    // Before the compaction (A4's `/compact` is a command, not a prompt, so the replay does not compact), each
    // request is the recorded one: system (after Claude Code's billing header, which it does not record), tools
    // and messages. What running a tool or this machine makes (the environment block, the git status, the todo
    // list a reminder quotes, the memory path under HOME) is taken from the recording; the pair says nothing
    // differs. After the compaction the pairs say what does.
    const beforeCompaction = recorded.filter((entry) => !entry.label.startsWith('A5'));
    for (const [index, entry] of beforeCompaction.entries()) {
      const pair = pairs[index] as PairLine;
      const sent = pair.wire.body as PairLine['wire']['body'] & { system: { text?: string }[] };
      const { system: recordedSystem } = entry.body as unknown as { system: { text?: string }[] };
      expect(sent.tools, entry.label).toEqual(entry.body.tools);
      expect(sent.messages, entry.label).toEqual(entry.body.messages);
      expect(sent.system.slice(1), entry.label).toEqual(recordedSystem.slice(1));
      expect(pair.differs_from_recording, entry.label).toEqual([]);
    }
    for (const pair of pairs.slice(beforeCompaction.length))
      expect(pair.differs_from_recording?.length).toBeGreaterThan(0);
    // Nothing ran: the workspace holds what it held, and the private tree is gone.
    expect(readdirSync(ws)).toEqual(['planted.txt']);
    const after = statSync(join(ws, 'planted.txt'));
    expect([after.mtimeMs, after.ino, after.size]).toEqual([before.mtimeMs, before.ino, before.size]);
    expect(readdirSync(tmp).filter((name) => name.startsWith('replay-claude-'))).toEqual([]);
  }, 240_000);
});

describe('replay --agent claude-code --concurrency 2', () => {
  it('replays sessions at once, each in its own Claude Code, a background sub-agent in place', async () => {
    const ws = join(dir.path, 'all-ws');
    mkdirSync(ws);
    const out = join(dir.path, 'all.jsonl');
    const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
      id: string;
      title: string;
      kind: string;
    }[];
    const byTitle = (prefix: string) =>
      listed.find((session) => session.title.startsWith(prefix))?.id as string;
    const subagent = byTitle('Review util module');
    const targets = [byTitle('[B1]'), byTitle('[D1]'), subagent];
    const args = ['--agent', 'claude-code', '--workspace', ws, '--concurrency', '2', '--out', out, '--json'];
    const result = await run(['replay', ...targets, '--db', db, ...args], { env: { TMPDIR: tmp } });
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { id: string; status: string };
    expect(report.status).toBe('done');
    const counts = new Map<string, number>();
    for (const line of readFileSync(out, 'utf8').trim().split('\n')) {
      const { session } = JSON.parse(line) as { session: string };
      counts.set(session, (counts.get(session) ?? 0) + 1);
    }
    // B: its first answer reports a context near the limit, so Claude Code compacts (answered with the recorded
    // summary) and goes on: 5 turns, as recorded. D: a background agent runs in place (its 2 turns), and its
    // notification brings D's third turn, as recorded.
    expect(counts.get(byTitle('[B1]'))).toBe(5);
    expect(counts.get(byTitle('[D1]'))).toBe(3);
    expect(counts.get(byTitle('Count README lines'))).toBe(2);
    // A sub-agent named on its own is replayed within its parent, which is not here: no failure, no pair.
    expect(counts.has(subagent)).toBe(false);
    expect(result.stderr).toContain(
      `${subagent.slice(0, 8)} done: 0 turn(s) (a sub-agent: replayed within its parent`,
    );
    const shown = JSON.parse((await run(['runs', report.id, '--db', db, '--json'])).stdout) as {
      driver: string;
    };
    expect(shown.driver).toBe('claude-code');
    expect(readdirSync(ws)).toEqual([]);
  }, 240_000);
});

describe('replay --agent claude-code: a recording of harmful calls', () => {
  let listener: Server;
  let hits = 0;
  beforeAll(async () => {
    listener = createServer((_req, res) => {
      hits++;
      res.end('exfiltrated');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  it('runs none of them: no file removed or made, no request reaches the network', async () => {
    const ws = join(dir.path, 'victim-ws');
    mkdirSync(ws);
    const victim = join(ws, 'victim.txt');
    const created = join(ws, 'created.txt');
    const marker = join(ws, 'marker');
    const subMarker = join(ws, 'sub-marker');
    writeFileSync(victim, 'keep me\n');
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/exfil`;
    const logs = join(dir.path, 'harmful');
    mkdirSync(logs);
    writeTranscript(join(logs, 'harmful.jsonl'), {
      sessionId: 'cccccccc-0000-4000-8000-000000000015',
      cwd: ws,
      prompt: 'Clean up and report home.',
      steps: [
        { calls: [{ id: 'toolu_rm', name: 'Bash', input: { command: `rm -f ${victim}` }, result: '' }] },
        {
          calls: [
            { id: 'toolu_touch', name: 'Bash', input: { command: `touch ${marker}` }, result: '' },
            {
              id: 'toolu_write',
              name: 'Write',
              input: { file_path: created, content: 'pwned' },
              result: `File created successfully at: ${created}`,
            },
          ],
        },
        {
          calls: [
            {
              id: 'toolu_edit',
              name: 'Edit',
              input: { file_path: victim, old_string: 'keep me', new_string: 'gone' },
              result: `The file ${victim} has been updated.`,
            },
          ],
        },
        { calls: [{ id: 'toolu_curl', name: 'Bash', input: { command: `curl -s ${url}` }, result: 'ok' }] },
        {
          calls: [
            {
              id: 'toolu_fetch',
              name: 'WebFetch',
              input: { url, prompt: 'what is there?' },
              result: 'nothing',
            },
          ],
        },
        {
          // An MCP tool: its server is a stand-in of ours that lists it and runs nothing.
          calls: [
            {
              id: 'toolu_mcp',
              name: 'mcp__tracker__file_issue',
              input: { title: 'cleanup done', attach: created },
              result: 'filed #7',
            },
          ],
        },
        {
          // A sub-agent, run in place by Claude Code: its own Bash goes through the same hook.
          calls: [
            {
              id: 'toolu_agent',
              name: 'Agent',
              input: {
                description: 'Finish the cleanup',
                prompt: 'Touch the second marker.',
                subagent_type: 'general-purpose',
                run_in_background: false,
              },
              result: 'Touched it.',
              agent: {
                id: 'a0ba0ba0ba0ba0ba0',
                prompt: 'Touch the second marker.',
                steps: [
                  {
                    calls: [
                      {
                        id: 'toolu_sub_touch',
                        name: 'Bash',
                        input: { command: `touch ${subMarker}` },
                        result: '',
                      },
                    ],
                  },
                ],
                answer: 'Touched it.',
              },
            },
          ],
        },
      ],
      answer: 'Cleaned up.',
    });
    const store = join(dir.path, 'harmful.db');
    expect((await run(['ingest', logs, '--db', store])).exitCode).toBe(0);
    const out = join(dir.path, 'harmful-pairs.jsonl');
    const result = await run(
      ['replay', '--all', '--db', store, '--agent', 'claude-code', '--out', out, '--json'],
      {
        env: { TMPDIR: tmp },
      },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      turnsDone: number;
      misses: number;
      sideEffects: { copyOnWrite: { overlaid: string[] } | null; changes: unknown[] };
    };
    // 8 turns of the main session, 2 of the sub-agent it starts (replayed in place, within it).
    expect(report).toMatchObject({ turnsDone: 10, misses: 0 });
    const perSession = new Map<string, number>();
    for (const pair of pairsOf(out)) perSession.set(pair.session, (perSession.get(pair.session) ?? 0) + 1);
    expect([...perSession.values()].sort()).toEqual([2, 8]);
    // The recording holds no definition of the MCP tool: it is offered with a schema taking any object, and
    // the run says so.
    expect(result.stderr).toContain('mcp__tracker__file_issue offered with a schema that takes any object');
    const offered = (pairsOf(out)[0]?.wire.body.tools ?? []) as { name: string; input_schema?: unknown }[];
    // Claude Code lists a stand-in's tool as the stand-in gives it: its definition is ours to choose.
    expect(offered.find((tool) => tool.name === 'mcp__tracker__file_issue')).toEqual({
      name: 'mcp__tracker__file_issue',
      description: '',
      input_schema: { type: 'object' },
    });
    // Claude Code ran against a copy-on-write view of the workspace: had anything been written, it would be in
    // the view's layer, not here.
    expect(report.sideEffects.copyOnWrite?.overlaid).toEqual([ws]);
    expect(report.sideEffects.changes).toEqual([]);
    // And under bubblewrap instead (--sandbox), where it runs: the workspace read-only to Claude Code, the same
    // answers.
    if (!bwrapWorks) return;
    const boxed = await run(
      [
        'replay',
        '--all',
        '--db',
        store,
        '--agent',
        'claude-code',
        '--sandbox',
        '--out',
        out,
        '--force',
        '--json',
      ],
      { env: { TMPDIR: tmp } },
    );
    expect(boxed.exitCode, boxed.stderr).toBe(0);
    expect(JSON.parse(boxed.stdout)).toMatchObject({ turnsDone: 10, misses: 0 });
    // Every call reached the model as its recorded result.
    const last = pairsOf(out).at(-1)?.wire.body.messages ?? [];
    const results = last.flatMap((message) =>
      Array.isArray(message.content)
        ? (message.content as { type: string; content?: unknown }[]).filter(
            (block) => block.type === 'tool_result',
          )
        : [],
    );
    expect(results.map((block) => block.content)).toEqual([
      '',
      '',
      `File created successfully at: ${created}`,
      `The file ${victim} has been updated.`,
      'ok',
      'nothing',
      'filed #7',
      [{ type: 'text', text: 'Touched it.' }],
    ]);
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(existsSync(created)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(subMarker)).toBe(false);
    expect(hits).toBe(0);
  }, 240_000);
});

describe('replay --agent claude-code --model anthropic:…', () => {
  it('sends Claude Code’s requests to the model with the recorded results in place; a call the recording lacks is a miss, never run', async () => {
    const ws = join(dir.path, 'notes-ws');
    mkdirSync(ws);
    writeFileSync(join(ws, 'notes.txt'), 'the file as it is now\n');
    const logs = join(dir.path, 'notes');
    mkdirSync(logs);
    writeTranscript(join(logs, 'notes.jsonl'), {
      sessionId: 'cccccccc-0000-4000-8000-000000000016',
      cwd: ws,
      prompt: 'Read the notes.',
      steps: [
        {
          calls: [
            {
              id: 'toolu_notes',
              name: 'Read',
              input: { file_path: join(ws, 'notes.txt') },
              result: 'RECORDED NOTES',
            },
          ],
        },
      ],
      answer: 'The notes say hello.',
    });
    const store = join(dir.path, 'notes.db');
    expect((await run(['ingest', logs, '--db', store])).exitCode).toBe(0);
    const server = await startModelServer({
      turns: [
        {
          text: 'Reading.',
          toolCalls: [{ id: 'toolu_live1', name: 'Read', arguments: { file_path: join(ws, 'notes.txt') } }],
        },
        {
          toolCalls: [{ id: 'toolu_live2', name: 'Read', arguments: { file_path: join(ws, 'secret.txt') } }],
        },
        { text: 'Done.' },
      ],
    });
    try {
      const out = join(dir.path, 'notes-pairs.jsonl');
      const result = await run(['replay', '--all', '--db', store, ...live(server), '--out', out, '--json'], {
        env: { TMPDIR: tmp, ANTHROPIC_API_KEY: 'sk-ant-upstream-key' },
      });
      expect(result.exitCode, result.stderr).toBe(0);
      const asked = server.chatRequests();
      expect(asked).toHaveLength(3);
      // The upstream got the user's key and our model, never the run's secret.
      for (const request of asked) {
        expect(request.headers['x-api-key']).toBe('sk-ant-upstream-key');
        expect(request.body?.model).toBe('claude-live-test');
        expect(request.body?.stream).toBe(true);
      }
      const resultsIn = (index: number) =>
        ((asked[index]?.body?.messages ?? []) as { content: unknown }[]).flatMap((message) =>
          Array.isArray(message.content)
            ? (
                message.content as {
                  type: string;
                  tool_use_id?: string;
                  content?: unknown;
                  is_error?: boolean;
                }[]
              ).filter((block) => block.type === 'tool_result')
            : [],
        );
      // The recorded result, not the file on disk, not the hook's deny text.
      const [given] = resultsIn(1);
      const { cache_control: _mark, ...block } = given as Record<string, unknown>;
      expect(block).toEqual({ type: 'tool_result', tool_use_id: 'toolu_live1', content: 'RECORDED NOTES' });
      // A file the recording never read: an error result saying so; the file was not read (it does not exist).
      const miss = resultsIn(2)[1];
      expect(miss).toMatchObject({ tool_use_id: 'toolu_live2', is_error: true });
      expect(String(miss?.content)).toContain('not in the recording');
      const report = JSON.parse(result.stdout) as { misses: number; turnsDone: number };
      expect(report).toMatchObject({ misses: 1, turnsDone: 3 });
      const pairs = pairsOf(out);
      expect(pairs.map((pair) => pair.match.tool_calls)).toEqual(['exact', 'differs', 'none']);
      expect(readFileSync(join(ws, 'notes.txt'), 'utf8')).toBe('the file as it is now\n');
    } finally {
      await server.close();
    }
  }, 240_000);
});

/** Whether bubblewrap can run here (--sandbox): `.ci/run` installs it where it can. */
const bwrapWorks = spawnSync('bwrap', ['--bind', '/', '/', '--die-with-parent', 'true']).status === 0;

describe('replay --agent claude-code killed with SIGKILL mid-run', () => {
  it('stops Claude Code too, with nothing run and the workspace unchanged', async () => {
    const ws = join(dir.path, 'killed-ws');
    mkdirSync(ws);
    const marker = join(ws, 'marker');
    const logs = join(dir.path, 'killed');
    mkdirSync(logs);
    writeTranscript(join(logs, 'killed.jsonl'), {
      sessionId: 'cccccccc-0000-4000-8000-000000000017',
      cwd: ws,
      prompt: 'Make the marker twice.',
      steps: [
        { calls: [{ id: 'toolu_t1', name: 'Bash', input: { command: `touch ${marker}` }, result: '' }] },
        { calls: [{ id: 'toolu_t2', name: 'Bash', input: { command: `touch ${marker}` }, result: '' }] },
      ],
      answer: 'Made.',
    });
    const store = join(dir.path, 'killed.db');
    expect((await run(['ingest', logs, '--db', store])).exitCode).toBe(0);
    // The second answer never comes in time: the replay is killed while Claude Code waits for it, between two
    // tool calls.
    const server = await startModelServer({
      turns: [
        { toolCalls: [{ id: 'toolu_live1', name: 'Bash', arguments: { command: `touch ${marker}` } }] },
        {
          delayMs: 120_000,
          toolCalls: [{ id: 'toolu_live2', name: 'Bash', arguments: { command: `touch ${marker}` } }],
        },
      ],
    });
    try {
      const child = execa(
        'node',
        [bin, 'replay', '--all', '--db', store, ...live(server), '--out', join(dir.path, 'killed.jsonl')],
        { reject: false, env: { NO_COLOR: '1', TMPDIR: tmp, ANTHROPIC_API_KEY: 'sk-ant-upstream-key' } },
      );
      const pid = child.pid as number;
      for (let waited = 0; server.chatRequests().length < 2; waited += 50) {
        if (waited > 120_000) throw new Error('Claude Code never asked a second time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const claudes = descendants(pid, 'claude');
      expect(claudes.length).toBeGreaterThan(0);
      process.kill(pid, 'SIGKILL');
      await child;
      // The watchdog stops Claude Code within seconds (it checks every second, then TERM, then KILL).
      for (let waited = 0; claudes.some(alive); waited += 100) {
        if (waited > 30_000) throw new Error(`Claude Code still runs: ${claudes.filter(alive).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(existsSync(marker)).toBe(false);
      expect(readdirSync(ws)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 240_000);
});

describe('replay --agent claude-code: what it refuses before anything runs', () => {
  it('says what is wrong and what to do, exit 2, and makes no run', async () => {
    const runsNow = async () =>
      (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as unknown[]).length;
    const before = await runsNow();
    const replay = (...args: string[]) => run(['replay', '--all', '--db', db, ...args]);
    const agent = ['--agent', 'claude-code'];
    for (const [args, said] of [
      [[...agent, '--claude-bin', join(dir.path, 'no-claude')], 'not an executable file'],
      [[...agent, '--model', 'openai:gpt-4o-mini'], 'speaks the Anthropic Messages wire'],
      [[...agent, '--mode', 'forced'], 'replays in free mode'],
      [[...agent, '--context-limit', '1000'], '--context-limit only applies with --agent opencode'],
      [['--claude-bin', '/usr/bin/true'], '--claude-bin only applies with --agent claude-code'],
      [['--sandbox'], '--sandbox only applies with --agent opencode or --agent claude-code'],
      [[...agent, '--system-prompt', '/etc/hostname'], 'Claude Code writes its own system prompt'],
    ] as const) {
      const refused = await replay(...args);
      expect(refused.exitCode, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(said);
    }
    // A missing binary says how to get the tested one.
    const missing = await replay(...agent, '--claude-bin', join(dir.path, 'no-claude'));
    expect(missing.stderr).toContain('npm i -g @anthropic-ai/claude-code@2.1.328');
    expect(await runsNow()).toBe(before);
  }, 120_000);
});

describe('replay --agent claude-code of the sample sessions: Claude Code’s own older ones and opencode’s', () => {
  it('answers every call, the other agent’s tools mapped to Claude Code’s, sub-agents (Task, task) in place', async () => {
    const store = join(dir.path, 'samples.db');
    expect((await run(['ingest', join(root, 'sample-sessions'), '--db', store])).exitCode).toBe(0);
    const ws = join(dir.path, 'samples-ws');
    mkdirSync(ws);
    const out = join(dir.path, 'samples.jsonl');
    const args = ['--agent', 'claude-code', '--workspace', ws, '--concurrency', '2', '--out', out, '--json'];
    const result = await run(['replay', '--all', '--db', store, ...args], { env: { TMPDIR: tmp } });
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { misses: number; matches: Record<string, number> };
    const listed = JSON.parse((await run(['sessions', '--db', store, '--json'])).stdout) as {
      id: string;
      agent: string;
      kind: string;
      title: string;
      unansweredToolCalls: number;
    }[];
    // Every call the model made was in the recording, but those the recording never got a result for (an
    // interrupted turn): those are misses, answered with an error, never run.
    const unanswered = listed.reduce((sum, session) => sum + session.unansweredToolCalls, 0);
    expect(unanswered).toBeGreaterThan(0);
    expect(report.misses).toBe(unanswered);
    expect(report.matches.differs).toBe(0);
    const pairs = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as PairLine & {
            agent: string;
            completion: { tool_calls?: { function: { name: string } }[] };
          },
      );
    // Every sub-agent ran in place: each has pairs of its own.
    for (const sub of listed.filter((session) => session.kind === 'subagent'))
      expect(
        pairs.some((pair) => pair.session === sub.id),
        sub.title,
      ).toBe(true);
    // opencode's session was driven with Claude Code's tools: the model called Read/Bash/Edit, not read/bash/edit.
    const opencode = pairs.filter((pair) => pair.agent === 'opencode');
    expect(opencode.length).toBeGreaterThan(5);
    const names = new Set(
      opencode.flatMap((pair) => (pair.completion.tool_calls ?? []).map((call) => call.function.name)),
    );
    for (const name of ['Read', 'Bash', 'Edit', 'Agent']) expect(names.has(name), name).toBe(true);
    for (const name of ['read', 'bash', 'edit', 'task']) expect(names.has(name), name).toBe(false);
    // webfetch has no faithful Claude Code counterpart: served under its recorded name, Claude Code refuses it
    // (no tool runs) and the recorded result is put in place by id, as for any call.
    expect(readdirSync(ws)).toEqual([]);
  }, 240_000);
});

describe('replay --agent claude-code stopped (SIGTERM) and resumed', () => {
  it('goes on with --resume: the begun session again from its start, every pair once', async () => {
    const ws = join(dir.path, 'resume-ws');
    mkdirSync(ws);
    const logs = join(dir.path, 'resume');
    mkdirSync(logs);
    const steps = Array.from({ length: 4 }, (_, index) => ({
      calls: [
        {
          id: `toolu_r${index}`,
          name: 'Read',
          input: { file_path: join(ws, `f${index}.txt`) },
          result: `content ${index}`,
        },
      ],
    }));
    writeTranscript(join(logs, 'resume.jsonl'), {
      sessionId: 'cccccccc-0000-4000-8000-000000000018',
      cwd: ws,
      prompt: 'Read the four files.',
      steps,
      answer: 'Read them.',
    });
    const store = join(dir.path, 'resume.db');
    expect((await run(['ingest', logs, '--db', store])).exitCode).toBe(0);
    // Each answer goes by how far the conversation it is sent is (its tool results so far); the third answer
    // of the first run is slow, and the replay is stopped while Claude Code waits for it.
    let slowed = false;
    const server = await startModelServer({
      responders: [
        (request) => {
          const done = JSON.stringify(request.messages ?? []).split('"tool_result"').length - 1;
          const call = steps[done]?.calls[0];
          if (!call) return { text: 'Read them.' };
          const slow = done === 2 && !slowed;
          if (slow) slowed = true;
          return {
            ...(slow ? { delayMs: 60_000 } : {}),
            toolCalls: [{ id: `toolu_live${done}`, name: 'Read', arguments: call.input }],
          };
        },
      ],
    });
    const out = join(dir.path, 'resume.jsonl');
    const env = { TMPDIR: tmp, ANTHROPIC_API_KEY: 'sk-ant-upstream-key' };
    try {
      const child = execa(
        'node',
        [bin, 'replay', '--all', '--db', store, ...live(server), '--out', out, '--json'],
        {
          reject: false,
          env: { NO_COLOR: '1', ...env },
        },
      );
      for (let waited = 0; server.chatRequests().length < 3; waited += 50) {
        if (waited > 120_000) throw new Error('Claude Code never asked a third time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      child.kill('SIGTERM');
      const stopped = await child;
      expect(stopped.exitCode).toBe(143);
      const runId = /--resume (run_\S+)/.exec(String(stopped.stderr))?.[1] as string;
      expect(runId).toBeDefined();
      expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(2);

      const resumed = await run(['replay', '--resume', runId, '--db', store, '--json'], { env });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('claude-code cannot continue a session mid-way');
      const turns = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { turn: number }).turn);
      // Replayed again from its start: turns 1 to 5, each once (the two earlier pairs were taken out).
      expect(turns).toEqual([1, 2, 3, 4, 5]);
      expect(readdirSync(ws)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 240_000);
});

describe('replay --agent claude-code --elide-repeats', () => {
  it('hands Claude Code the marker for a repeat of an identical read, and counts it', async () => {
    const ws = join(dir.path, 'elide-ws');
    mkdirSync(ws);
    const logs = join(dir.path, 'elide');
    mkdirSync(logs);
    const file = join(ws, 'app.py');
    const content = Array.from(
      { length: 40 },
      (_, line) => `${line + 1}\tdef f${line}(): return ${line}`,
    ).join('\n');
    const read = (id: string) => ({ id, name: 'Read', input: { file_path: file }, result: content });
    writeTranscript(join(logs, 'elide.jsonl'), {
      sessionId: 'cccccccc-0000-4000-8000-000000000019',
      cwd: ws,
      prompt: 'Read the app twice.',
      steps: [{ calls: [read('toolu_e1')] }, { calls: [read('toolu_e2')] }],
      answer: 'Same both times.',
    });
    const store = join(dir.path, 'elide.db');
    expect((await run(['ingest', logs, '--db', store])).exitCode).toBe(0);
    const out = join(dir.path, 'elide.jsonl');
    const args = ['--agent', 'claude-code', '--elide-repeats', '--out', out, '--json'];
    const result = await run(['replay', '--all', '--db', store, ...args], { env: { TMPDIR: tmp } });
    expect(result.exitCode, result.stderr).toBe(0);
    const pairs = pairsOf(out);
    expect(pairs).toHaveLength(3);
    const results = (pairs.at(-1)?.wire.body.messages ?? []).flatMap((message) =>
      Array.isArray(message.content)
        ? (message.content as { type: string; content?: unknown }[]).filter(
            (block) => block.type === 'tool_result',
          )
        : [],
    );
    expect(results.map((block) => block.content)).toEqual([
      content,
      expect.stringContaining('identical to its earlier result (call toolu_e1)'),
    ]);
    const report = JSON.parse(result.stdout) as { elision: { resultsElided: number } };
    expect(report.elision.resultsElided).toBeGreaterThan(0);
  }, 240_000);
});
