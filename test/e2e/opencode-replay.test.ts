import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { prepareEnvironment } from '../../src/drivers/opencode/environment.js';
import { outputText } from '../../src/model/session.js';
import { turns } from '../../src/model/turns.js';
import { elisionMarker } from '../../src/replay/elide.js';
import { openDb } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { bin, root, run } from '../helpers/cli.js';
import {
  type ChatRequest,
  contentText,
  type ScriptedReply,
  startModelServer,
} from '../helpers/model-server.js';
import { opencodeBinary } from '../helpers/opencode.js';
import {
  alive,
  childrenOf,
  db,
  dir,
  isTitle,
  mainId,
  readPairs,
  results,
  scripted,
  shortId,
  shortSteps,
  sleep,
  snapshot,
  stepRequests,
  steps,
  titleResponder,
  useSample,
  workspace,
} from '../helpers/opencode-sample.js';
import { prompts } from '../helpers/opencode-scenario.js';

useSample('opencode-replay-');

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
      // The sample's short cut (one prompt: an edit, a command, the answer): the kill and the resume are not
      // about the session's length.
      const first = shortSteps[0] ?? [];
      // The first step (the edit) answers; the second hangs until long after the kill.
      server.push(first[0] as ScriptedReply, { ...(first[1] as ScriptedReply), delayMs: 60_000 });
      const child = execa('node', [bin, ...scripted(server, ws, out, shortId)], { reject: false });
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
      server.push(...shortSteps.flat());
      const resumed = await run(['replay', '--resume', killed?.id ?? '', '--db', db, '--json']);
      expect(resumed.exitCode).toBe(0);
      expect(resumed.stderr).toContain(
        'begun by the interrupted run; opencode cannot continue a session mid-way, so it is replayed again from its start',
      );
      expect(resumed.stderr).toContain('1 earlier pair(s) of those sessions taken out');
      const all = shortSteps.flat().length;
      expect(all).toBe(3);
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
