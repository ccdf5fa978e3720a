// `replay --agent opencode` end to end: our binary drives the real opencode binary (npm opencode-ai, pinned)
// over the committed opencode sample, against the scripted model server. Every tool call must be answered from
// the recording, nothing may change in the workspace, and every agent step must become one pair.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareEnvironment } from '../../src/drivers/opencode/environment.js';
import { outputText } from '../../src/model/session.js';
import { turns } from '../../src/model/turns.js';
import { elisionMarker } from '../../src/replay/elide.js';
import { openDb } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { bin, root, run, tempDir } from '../helpers/cli.js';
import {
  type ChatRequest,
  contentText,
  type ModelServer,
  type ScriptedReply,
  startModelServer,
} from '../helpers/model-server.js';
import { opencodeBinary } from '../helpers/opencode.js';
import { prompts } from '../helpers/opencode-scenario.js';
import { recordedSteps } from '../helpers/recorded-steps.js';

interface PairLine {
  run: string;
  session: string;
  agent: string;
  turn: number;
  mode: string;
  model: string;
  messages: { role: string; content: unknown; tool_call_id?: string }[];
  tools: unknown[];
  completion: { content: string | null; tool_calls?: { function: { name: string } }[] };
  original: { content: string | null } | null;
  match: { tool_calls: string };
}

let dir: ReturnType<typeof tempDir>;
let db: string;
let mainId: string;
/** What opencode would be asked, prompt by prompt: the recorded turns up to the first without a tool call. */
let steps: ScriptedReply[][];
/** The recorded results of the main session's calls, in call order, as text. */
let results: { output: string; isError: boolean }[];

/** Every file under a directory with a hash of its content: what must not change. */
function snapshot(path: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      const entry = join(at, name);
      const stat = statSync(entry);
      if (stat.isDirectory()) {
        out.set(`${entry}/`, 'dir');
        walk(entry);
      } else out.set(entry, createHash('sha256').update(readFileSync(entry)).digest('hex'));
    }
  };
  walk(path);
  return out;
}

/** A workspace like the one the session was recorded in, with the file its `bash` deleted. */
function workspace(name: string): string {
  const path = join(dir.path, name);
  mkdirSync(join(path, 'src'), { recursive: true });
  writeFileSync(
    join(path, 'src', 'todos.js'),
    'function list(limit) {\n  return todos.slice(0, limit - 1);\n}\n',
  );
  writeFileSync(join(path, 'test.js'), "require('./src/todos');\n");
  writeFileSync(join(path, 'debug.log'), 'list(5) -> 4 items\n');
  return path;
}

const isTitle = (request: ChatRequest) =>
  contentText(request.messages?.[0]?.content).includes('You are a title generator');
const titleResponder = (request: ChatRequest): ScriptedReply | undefined =>
  isTitle(request) ? { text: 'Replayed title' } : undefined;
const stepRequests = (server: ModelServer) =>
  server.chatRequests().filter((request) => request.body && !isTitle(request.body));

/** `replay` of the sample's main session through opencode, the scripted server as the model. */
function scripted(server: { baseURL: string }, ws: string, out: string): string[] {
  return [
    'replay',
    mainId,
    '--db',
    db,
    '--agent',
    'opencode',
    '--model',
    'openai:scripted',
    '--base-url',
    server.baseURL,
    '--workspace',
    ws,
    '--out',
    out,
  ];
}

/** `replay` of the sample's main session through opencode with the recorded model (no server). */
function recordedReplay(ws: string, out: string): string[] {
  return ['replay', mainId, '--db', db, '--agent', 'opencode', '--workspace', ws, '--out', out];
}

function readPairs(file: string): PairLine[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PairLine);
}

beforeAll(async () => {
  dir = tempDir('opencode-replay-');
  db = join(dir.path, 'store.db');
  const ingest = await run(['ingest', join(root, 'sample-sessions', 'opencode'), '--db', db]);
  expect(ingest.exitCode).toBe(0);
  const handle = openDb(db);
  try {
    const store = new SessionStore(handle);
    const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
      id: string;
      title: string;
    }[];
    mainId = listed.find((s) => s.title === 'Fix todos limit off-by-one')?.id ?? '';
    const loaded = store.load(mainId);
    if (!loaded) throw new Error('the sample main session is not in the store');
    ({ steps, results } = recordedSteps(loaded.session.messages, loaded.own));
  } finally {
    handle.close();
  }
});

afterAll(() => dir?.remove());

describe('replay --agent opencode (real binary, scripted model)', () => {
  it('answers every call from the recording, changes nothing, and writes one pair per agent step', async () => {
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const ws = workspace('ws-main');
    const out = join(dir.path, 'main.jsonl');
    const before = snapshot(ws);
    try {
      // The whole script up front: opencode asks step after step, prompt after prompt.
      server.push(...steps.flat());
      const result = await run([...scripted(server, ws, out), '--json']);
      expect(result.stderr).not.toMatch(/error/i);
      expect(result.exitCode).toBe(0);
      const report = JSON.parse(result.stdout) as {
        driver: string;
        mode: string;
        turnsDone: number;
        turnsFailed: number;
        misses: number;
        sideEffects: { checked: boolean; roots: string[]; changes: unknown[] };
      };
      const asked = steps.flat().length;
      expect(asked).toBe(12);
      expect(report).toMatchObject({
        driver: 'opencode',
        mode: 'free',
        turnsDone: asked,
        turnsFailed: 0,
        misses: 0,
      });
      expect(report.sideEffects.checked).toBe(true);
      expect(report.sideEffects.roots).toEqual([ws]);
      expect(report.sideEffects.changes).toEqual([]);
      expect(server.remaining()).toBe(0);

      // Nothing changed: not the file the recorded `bash` deleted, not the one `edit` changed, nothing new.
      expect(snapshot(ws)).toEqual(before);
      expect(existsSync(join(ws, 'debug.log'))).toBe(true);

      // One pair per agent step, in order. The session is given its recorded title, so opencode asks for none.
      const pairs = readPairs(out);
      const requests = stepRequests(server);
      expect(server.chatRequests().filter((r) => r.body && isTitle(r.body))).toEqual([]);
      expect(requests).toHaveLength(asked);
      expect(pairs.map((p) => p.turn)).toEqual(Array.from({ length: asked }, (_, i) => i + 1));
      expect(new Set(pairs.map((p) => `${p.agent} ${p.mode} ${p.model} ${p.session}`))).toEqual(
        new Set([`opencode free openai:scripted ${mainId}`]),
      );
      // The pair holds the prompt exactly as opencode sent it, and the answer it got.
      for (const [index, pair] of pairs.entries()) {
        expect(pair.messages).toEqual(requests[index]?.body?.messages);
        expect(pair.tools).toEqual(requests[index]?.body?.tools);
        expect(pair.original?.content ?? null).toBe(pair.completion.content ?? null);
        expect(['exact', 'none']).toContain(pair.match.tool_calls);
      }

      // The model was shown the recorded output of every call, in order (no compaction in the replay, so the
      // last request holds them all): the webfetch page, the failed read, the empty `rm`, the sub-agent's answer.
      const last = requests.at(-1)?.body?.messages ?? [];
      const shown = last.filter((m) => m.role === 'tool').map((m) => contentText(m.content));
      expect(shown).toHaveLength(results.length);
      for (const [index, result] of results.entries()) {
        if (result.isError) expect(shown[index]).toContain(result.output.replace(/^Error: /, ''));
        else expect(shown[index]).toBe(result.output);
      }
      expect(shown[0]).toContain('# limit returns one item too few');

      // One opencode session across the three prompts: the last request carries all of them, in order.
      const typed = last.filter((m) => m.role === 'user').map((m) => contentText(m.content));
      expect(typed).toEqual([prompts.fix, prompts.changelog, prompts.thanks]);
    } finally {
      await server.close();
    }
  });

  it('offers the model byte-identical tools to a plain opencode run, and runs shows both drivers', async () => {
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const ws = workspace('ws-tools');
    const plain = prepareEnvironment({
      workspace: ws,
      baseURL: server.baseURL,
      model: 'scripted',
      plugin: false,
    });
    try {
      server.push({ text: 'hello' });
      const child = await execa(opencodeBinary(), ['run', '--format', 'json', '--model', 'replay/scripted'], {
        cwd: ws,
        env: plain.env,
        extendEnv: false,
        input: prompts.fix,
        reject: false,
        timeout: 90_000,
        forceKillAfterDelay: 2_000,
      });
      expect(child.exitCode).toBe(0);
      const plainTools = stepRequests(server)[0]?.body?.tools;
      expect(plainTools?.length).toBeGreaterThan(5);
      const pairs = readPairs(join(dir.path, 'main.jsonl'));
      expect(JSON.stringify(pairs[0]?.tools)).toBe(JSON.stringify(plainTools));

      // The builtin driver on the same session, beside it in `runs`.
      const builtin = await run([
        'replay',
        mainId,
        '--db',
        db,
        '--mode',
        'free',
        '--out',
        join(dir.path, 'b.jsonl'),
      ]);
      expect(builtin.exitCode).toBe(0);
      const listed = await run(['runs', '--db', db]);
      expect(listed.stdout).toMatch(/DRIVER/);
      expect(listed.stdout).toMatch(/ free +opencode +done /);
      expect(listed.stdout).toMatch(/ free +builtin +done /);
      const json = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as { driver: string }[];
      expect(json.map((r) => r.driver).sort()).toEqual(['builtin', 'opencode']);
    } finally {
      plain.cleanup();
      await server.close();
    }
  });

  it('--on-miss stop: a call the recording lacks ends the session as diverged, and nothing runs', async () => {
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const ws = workspace('ws-miss');
    const out = join(dir.path, 'miss.jsonl');
    const before = snapshot(ws);
    try {
      server.push(
        { toolCalls: [{ name: 'bash', arguments: { command: 'touch pwned', description: 'Not recorded' } }] },
        { text: 'never asked: the proxy refuses the step after a stop' },
      );
      const result = await run([...scripted(server, ws, out), '--on-miss', 'stop', '--json']);
      expect(result.exitCode).toBe(0);
      const report = JSON.parse(result.stdout) as {
        id: string;
        turnsDone: number;
        misses: number;
        firstDivergence: { sessionId: string; turn: number | null }[];
        sideEffects: { changes: unknown[] };
      };
      expect(report.turnsDone).toBe(1);
      expect(report.misses).toBe(1);
      expect(report.sideEffects.changes).toEqual([]);
      expect(existsSync(join(ws, 'pwned'))).toBe(false);
      expect(snapshot(ws)).toEqual(before);
      // The step after the miss was refused by our proxy, never sent to the model.
      expect(stepRequests(server)).toHaveLength(1);
      expect(server.remaining()).toBe(1);
      expect(report.firstDivergence).toEqual([{ sessionId: mainId, turn: 1 }]);
      const shown = JSON.parse((await run(['runs', report.id, '--db', db, '--json'])).stdout) as {
        missList: { turn: number; policy: string; call: { name: string; input: { command: string } } }[];
      };
      expect(shown.missList).toMatchObject([
        { turn: 1, policy: 'stop', call: { name: 'bash', input: { command: 'touch pwned' } } },
      ]);
      const text = await run(['runs', report.id, '--db', db]);
      expect(text.stdout).toContain('misses:');
      expect(text.stdout).toContain('bash {"command":"touch pwned"');
      expect(readPairs(out)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('--elide-repeats: a repeated identical read reaches opencode as the marker, and a re-ask is counted', async () => {
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const ws = workspace('ws-elide');
    const out = join(dir.path, 'elide.jsonl');
    const read = { name: 'read', arguments: { filePath: '/tmp/ada/todo-api/src/todos.js' } };
    try {
      server.push(
        { toolCalls: [{ ...read, id: 'r1' }] },
        { toolCalls: [{ ...read, id: 'r2' }] },
        // The model asks again for what it was shown as a marker: a re-ask.
        { toolCalls: [{ ...read, id: 'r3' }] },
        { text: 'The slice drops one item.' },
        { text: 'Noted.' },
        { text: 'Done.' },
      );
      const result = await run([...scripted(server, ws, out), '--elide-repeats', '--json']);
      expect(result.exitCode).toBe(0);
      const report = JSON.parse(result.stdout) as {
        turnsDone: number;
        misses: number;
        elision: { resultsElided: number; reasks: number; bytesSaved: number };
      };
      expect(report).toMatchObject({ turnsDone: 6, misses: 0 });
      // What opencode's model was shown: the recorded file once, then the marker pointing at that call.
      const requests = stepRequests(server);
      const toolMessages = (index: number) =>
        (requests[index]?.body?.messages ?? [])
          .filter((m) => m.role === 'tool')
          .map((m) => contentText(m.content));
      const recordedRead = results.find((r) =>
        r.output.includes('<path>/tmp/ada/todo-api/src/todos.js</path>'),
      );
      expect(toolMessages(1)).toEqual([recordedRead?.output]);
      expect(toolMessages(2)).toEqual([recordedRead?.output, elisionMarker('r1')]);
      expect(toolMessages(3)).toEqual([recordedRead?.output, elisionMarker('r1'), elisionMarker('r1')]);
      // Per request, markers in its context: 1 (step 3) + 2 (step 4) + 2 (steps 5 and 6 each) = 7; one re-ask.
      expect(report.elision.resultsElided).toBe(7);
      expect(report.elision.reasks).toBe(1);
      expect(report.elision.bytesSaved).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('--context-limit: opencode compacts a long session as it would for the user; the summary is no pair', async () => {
    const summarize = (request: ChatRequest): ScriptedReply | undefined =>
      contentText(request.messages?.[0]?.content).includes('summarization')
        ? { text: '## Objective\n- Fix the limit bug.' }
        : undefined;
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder, summarize] });
    const ws = workspace('ws-compact');
    const out = join(dir.path, 'compact.jsonl');
    try {
      server.push(
        // A step that reports more prompt tokens than the window: opencode compacts after it.
        { text: 'Fixed it.', usage: { promptTokens: 60_000, completionTokens: 20 } },
        { text: 'Nothing left to do.' },
        { text: 'Noted.' },
        { text: 'Done.' },
      );
      const result = await run([...scripted(server, ws, out), '--context-limit', '32000', '--json']);
      expect(result.exitCode).toBe(0);
      const summaries = server
        .chatRequests()
        .filter((r) => contentText(r.body?.messages?.[0]?.content).includes('summarization'));
      expect(summaries).toHaveLength(1);
      const pairs = readPairs(out);
      expect(pairs.map((p) => p.completion.content)).toEqual([
        'Fixed it.',
        'Nothing left to do.',
        'Noted.',
        'Done.',
      ]);
      // After the compaction the model is shown the summary, not the history before it.
      const after = JSON.stringify(pairs[1]?.messages);
      expect(after).toContain('Fix the limit bug.');
      expect(after).not.toContain(prompts.fix);
    } finally {
      await server.close();
    }
  });

  it('a model endpoint that refuses: the turn fails with its error, said on stderr and stored; exit 1', async () => {
    // Every step is refused the same way: a 500 for a request after the first (the script's default once it
    // is used up) would be retried by opencode with its own backoff, for over a minute.
    const refusal = { error: { status: 400, message: 'scripted: context length exceeded' } };
    const server = await startModelServer({
      models: ['scripted'],
      responders: [titleResponder],
      exhausted: refusal,
    });
    const ws = workspace('ws-refused');
    const out = join(dir.path, 'refused.jsonl');
    try {
      // 400 is not retried (opencode retries 429 and 5xx with its own backoff, then fails the same way).
      server.push(refusal);
      const result = await run([...scripted(server, ws, out), '--json']);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toMatch(/turn 1 failed: HTTP 400: .*scripted: context length exceeded/);
      const report = JSON.parse(result.stdout) as { id: string; turnsDone: number; turnsFailed: number };
      expect(report).toMatchObject({ turnsDone: 0, turnsFailed: 1 });
      const handle = openDb(db);
      try {
        const stored = handle
          .prepare('SELECT turn, status, error FROM run_turns WHERE run_id = ?')
          .all(report.id) as { turn: number; status: string; error: string }[];
        expect(stored).toEqual([
          { turn: 1, status: 'failed', error: expect.stringContaining('scripted: context length exceeded') },
        ]);
      } finally {
        handle.close();
      }
      // Nothing half-written: no pair for a turn that never had an answer.
      expect(existsSync(out) ? readFileSync(out, 'utf8') : '').toBe('');
    } finally {
      await server.close();
    }
  });

  it('killing the replay mid-run stops opencode, with nothing executed', async () => {
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const ws = workspace('ws-kill');
    const out = join(dir.path, 'kill.jsonl');
    const before = snapshot(ws);
    try {
      const first = steps[0] ?? [];
      // The first step answers; the second hangs until long after the kill.
      server.push(first[0] as ScriptedReply, { ...(first[1] as ScriptedReply), delayMs: 60_000 });
      const child = execa('node', [bin, ...scripted(server, ws, out)], { reject: false });
      const deadline = Date.now() + 90_000;
      while (stepRequests(server).length < 2 && Date.now() < deadline) await sleep(100);
      expect(stepRequests(server)).toHaveLength(2);
      const opencode = childrenOf(child.pid as number);
      expect(opencode.length).toBeGreaterThan(0);
      child.kill('SIGKILL');
      await child;
      // The plugin sees its replay process gone and stops opencode (its model call has lost its proxy too).
      const gone = Date.now() + 15_000;
      while (opencode.some(alive) && Date.now() < gone) await sleep(100);
      expect(opencode.filter(alive)).toEqual([]);
      expect(snapshot(ws)).toEqual(before);
      // The pair written before the kill is whole.
      expect(readPairs(out)).toHaveLength(1);

      // --resume: opencode cannot go on from the middle of a session, so the begun one is replayed again from its
      // start in a new opencode session; the pair of the killed attempt is replaced, not kept beside the new ones.
      const runs = JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as {
        id: string;
        out: string;
        status: string;
      }[];
      const killed = runs.find((r) => r.out === out);
      expect(killed).toBeDefined();
      server.push(...steps.flat());
      const resumed = await run(['replay', '--resume', killed?.id ?? '', '--db', db, '--json']);
      expect(resumed.exitCode).toBe(0);
      expect(resumed.stderr).toContain(
        'begun by the interrupted run; opencode cannot continue a session mid-way, so it is replayed again from its start',
      );
      expect(resumed.stderr).toContain('1 earlier pair(s) of those sessions taken out');
      const all = steps.flat().length;
      expect(JSON.parse(resumed.stdout)).toMatchObject({
        status: 'done',
        driver: 'opencode',
        turnsDone: all,
        turnsFailed: 0,
      });
      const pairs = readPairs(out) as { turn: number }[];
      expect(pairs.map((p) => p.turn)).toEqual(Array.from({ length: all }, (_, i) => i + 1));
      expect(snapshot(ws)).toEqual(before);
    } finally {
      await server.close();
    }
  });
});

describe('replay --agent opencode on a Claude Code session (tools mapped)', () => {
  it('answers mapped calls from the recording, and calls opencode cannot express are misses', async () => {
    const ccDb = join(dir.path, 'claude.db');
    const ws = workspace('ws-claude');
    const before = snapshot(ws);
    const out = join(dir.path, 'claude.jsonl');
    const result = await run([
      'replay',
      join(
        root,
        'sample-sessions',
        'claude-code',
        '-home-ada-todo-api',
        '6f1c2a34-7b1d-4c55-9d0e-2a8b3c4d5e61.jsonl',
      ),
      '--db',
      ccDb,
      '--agent',
      'opencode',
      '--workspace',
      ws,
      '--out',
      out,
      '--json',
    ]);
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as {
      id: string;
      turnsDone: number;
      misses: number;
      callsMatched: number;
      callsOriginal: number;
      sideEffects: { changes: unknown[] };
    };
    const handle = openDb(ccDb);
    let recorded: { name: string; output: string }[] = [];
    try {
      const store = new SessionStore(handle);
      const loaded = store.load(readPairs(out)[0]?.session ?? '');
      const all = [...turns(loaded?.session.messages ?? [], loaded?.own ?? 0)];
      recorded = all.flatMap((turn) =>
        turn.results.map((r, i) => ({
          name: (turn.response.parts.filter((p) => p.type === 'tool_call')[i] as { name: string }).name,
          output: outputText(r.output),
        })),
      );
      expect(report.turnsDone).toBe(all.length);
    } finally {
      handle.close();
    }
    expect(report.sideEffects.changes).toEqual([]);
    expect(snapshot(ws)).toEqual(before);
    // opencode's model called `read`, `bash`, `edit`: answered with Claude Code's recorded Read, Bash, Edit results.
    const pairs = readPairs(out);
    const made = pairs.flatMap((p) => p.completion.tool_calls ?? []).map((c) => c.function.name);
    expect(made).toEqual(['read', 'grep', 'bash', 'edit', 'bash']);
    const last = pairs.at(-1)?.messages ?? [];
    const shown = last.filter((m) => m.role === 'tool').map((m) => contentText(m.content as never));
    const read = recorded.find((r) => r.name === 'Read');
    expect(read?.output.length).toBeGreaterThan(20);
    expect(shown[0]).toBe(read?.output);
    // Claude's Grep asked for `output_mode: content` and line numbers, which opencode's grep cannot: a miss,
    // listed with the recorded call nearest to it.
    expect(report.misses).toBe(1);
    const listed = JSON.parse((await run(['runs', report.id, '--db', ccDb, '--json'])).stdout) as {
      missList: { call: { name: string }; nearest: { name: string; differs: string[] }[] }[];
    };
    expect(listed.missList[0]?.call.name).toBe('grep');
    expect(listed.missList[0]?.nearest[0]?.name).toBe('Grep');
    expect(shown[1]).toContain('not in the recording');
    expect(report.callsMatched).toBe(report.callsOriginal - 1);
  });
});

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
    const result = await run([...recordedReplay(ws, out), '--json']);
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { turnsDone: number; sideEffects: { changes: unknown[] } };
    expect(report.turnsDone).toBe(12);
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
    const result = await run([...recordedReplay(ws, out)]);
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
    `#!/bin/sh\nif [ "$1" = run ]; then echo intruder > "$PWD/intruder.txt" 2>/dev/null || echo "write refused" >&2; fi\nexec ${opencodeBinary()} "$@"\n`,
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
      server.push(...steps.flat());
      const result = await run([
        ...scripted(server, ws, join(dir.path, `${name}.jsonl`)),
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
    expect(report.turnsDone).toBe(12);
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
      expect(report.turnsDone).toBe(12);
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PIDs whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie has exited; only its parent has not reaped it yet.
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
