#!/usr/bin/env node
// Ingest of a log that grew: the cost of re-ingesting a Claude Code transcript of about 20 MB after a live
// session appended to it (a prompt, the model's answer, a tool round trip), against its first ingest in the same
// run (issue 21's target: < 5%). Prints figures only; it asserts no timings.
//
//   npm run build && node bench/ingest/grow.mjs [--agent claude-code|codex|gemini|qwen] [--megabytes 20] [--runs 3] [--requests] [--json]
//
// The transcript is the largest main transcript of a generated corpus (bench/ingest/generate.mjs, grown until one
// file reaches the size asked for), copied alone into a scratch projects/ tree. Each run, on a fresh store: in one
// process (grow-child.mjs, so node's start-up is not counted), the first ingest and a re-ingest after each step;
// then the CLI in fresh node processes, the first ingest and a re-ingest after the prompt. Each re-ingest must add
// exactly the step's messages; "continued" counts the re-ingests that read only the new bytes. The scratch tree
// and stores are deleted.

import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, median, removeDb, runNode, table } from '../children.mjs';
import { generate } from './generate.mjs';
import { generate as generateCodex } from './generate-codex.mjs';
import { generate as generateGemini } from './generate-gemini.mjs';
import { generate as generateQwen } from './generate-qwen.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const MB = 1e6;

const { values } = parseArgs({
  options: {
    megabytes: { type: 'string', default: '20' },
    runs: { type: 'string', default: '3' },
    requests: { type: 'boolean', default: false },
    agent: { type: 'string', default: 'claude-code' },
    json: { type: 'boolean', default: false },
  },
});
const want = Number(values.megabytes) * MB;
const agents = ['claude-code', 'codex', 'gemini', 'qwen'];
if (!agents.includes(values.agent))
  throw new Error(`--agent: one of ${agents.join(', ')}, not ${values.agent}`);
const codex = values.agent === 'codex';
const gemini = values.agent === 'gemini';
const qwen = values.agent === 'qwen';
if (values.requests && values.agent !== 'claude-code')
  throw new Error('--requests is for Claude Code transcripts');
const runs = Number(values.runs);
const log = (text) => process.stderr.write(`${text}\n`);

function mainTranscripts(dir) {
  const found = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory() && entry.name !== 'subagents') walk(path);
      else if (entry.isFile() && entry.name.endsWith('.jsonl'))
        found.push({ path, size: statSync(path).size });
    }
  };
  walk(dir);
  return found.sort((a, b) => b.size - a.size);
}

/** A Codex rollout of a thread of its own (not a sub-agent's, whose file may open with a copied history). */
function ownThread(file) {
  const first = JSON.parse(
    readFileSync(file, 'utf8')
      .slice(0, 64 * 1024 * 1024)
      .split('\n')[0],
  );
  return typeof first.payload?.source !== 'object';
}

/** The largest main transcript (or rollout) of a corpus grown until one reaches `want` bytes. */
function transcript(scratch) {
  for (let megabytes = Math.ceil((want / MB) * 2); ; megabytes *= 2) {
    const dir = join(scratch, `corpus-${megabytes}`);
    if (codex) generateCodex({ dir, megabytes });
    else if (gemini) generateGemini({ dir, megabytes });
    else if (qwen) generateQwen({ dir, megabytes });
    else generate({ dir, megabytes, requests: values.requests });
    const found = mainTranscripts(
      join(dir, codex ? 'sessions' : gemini ? '.gemini' : qwen ? '.qwen' : 'projects'),
    );
    // A main log of its own: not a Codex sub-agent's (it may open with a copied history), not a Gemini stub.
    const [largest] = codex ? found.filter((f) => ownThread(f.path)) : found;
    // The Gemini and Qwen generators write no marathon session: the largest log of a corpus of 4× the size asked.
    if (largest && (largest.size >= want || ((gemini || qwen) && megabytes >= (want / MB) * 4)))
      return largest;
    rmSync(dir, { recursive: true, force: true });
    if (megabytes > 2000) throw new Error(`no transcript of ${want / MB} MB in a 2 GB corpus`);
  }
}

/**
 * The messages a request record made after the file's last one would name: its tail. Claude Code 2.1.3xx writes
 * one before each API response; its tail is every message appended since the record before it (the lines of
 * one response merged, consecutive user lines merged). Tracks the lines the growth adds too.
 */
class Tail {
  constructor(lines) {
    this.messages = [];
    this.run = false;
    this.last = undefined;
    for (const line of lines) {
      if (line.isSidechain) continue;
      if (line.type === 'api-request') {
        this.last = line;
        this.messages = [];
        this.run = false;
      } else this.see(line);
    }
  }

  see(line) {
    if (line.type === 'system') this.run = false;
    if (line.type === 'assistant' && Array.isArray(line.message?.content)) {
      this.run = false;
      const top = this.messages.at(-1);
      if (top?.id === line.message.id) top.message.content.push(...line.message.content);
      else
        this.messages.push({
          id: line.message.id,
          message: { role: 'assistant', content: [...line.message.content] },
        });
    } else if (line.type === 'user' && line.message?.content !== undefined) {
      const top = this.messages.at(-1);
      const blocks = (c) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);
      if (this.run && top)
        top.message = {
          role: 'user',
          content: [...blocks(top.message.content), ...blocks(line.message.content)],
        };
      else this.messages.push({ message: { role: 'user', content: line.message.content } });
      this.run = true;
    }
  }

  /** The record for the next response, chained to the last one; the tail starts again after it. */
  record(id, timestamp, messageHash) {
    const record = {
      type: 'api-request',
      sessionId: this.last.sessionId,
      id,
      timestamp,
      version: this.last.version,
      querySource: 'sdk',
      shapeHash: this.last.shapeHash,
      params: this.last.params,
      base: this.last.id,
      keep: this.last.keep + this.last.tail.length,
      tail: this.messages.map(({ message }) => messageHash(message)),
      cacheControl: [],
    };
    this.last = record;
    this.messages = [];
    this.run = false;
    return `${JSON.stringify(record)}\n`;
  }
}

/**
 * What a live session appends between two ingests, as Claude Code writes it: a new prompt (one user line), the
 * model's answer to it (one assistant line) and a tool round trip (a tool call, its result, the closing answer).
 * Each step is chained to the one before; `messages` is how many messages its re-ingest must add. With request
 * records in the file, each response comes after its record, as 2.1.3xx writes them.
 */
async function growthSteps(file) {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text));
  const last = lines.findLast((line) => typeof line.uuid === 'string' && !line.isSidechain);
  if (!last) throw new Error(`${file}: no line with a uuid`);
  const tail = new Tail(lines);
  const { messageHash } = await import(pathToFileURL(join(repo, 'dist', 'model', 'request.js')).href);
  let parent = last.uuid;
  let clock = Date.parse(last.timestamp);
  let n = 0;
  const line = (fields) => {
    const uuid = `0b5ad7e0-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    clock += 5_000;
    const value = {
      parentUuid: parent,
      isSidechain: false,
      ...fields,
      uuid,
      timestamp: new Date(clock).toISOString(),
      cwd: last.cwd,
      sessionId: last.sessionId,
      version: last.version,
    };
    tail.see(value);
    parent = uuid;
    return `${JSON.stringify(value)}\n`;
  };
  const usage = { input_tokens: 12, output_tokens: 40, cache_read_input_tokens: 30_000 };
  const answer = (id, content, stop) => {
    const record = tail.last
      ? tail.record(
          `0b5ad7e0-0000-4000-9000-${String(id).padStart(12, '0')}`,
          new Date(clock).toISOString(),
          messageHash,
        )
      : '';
    return (
      record +
      line({
        type: 'assistant',
        requestId: `req_grow${id}`,
        message: {
          id: `msg_grow${id}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content,
          stop_reason: stop,
          stop_sequence: null,
          usage,
        },
      })
    );
  };
  const prompt = line({
    type: 'user',
    message: { role: 'user', content: 'one more thing: run the tests again' },
  });
  const reply = answer(1, [{ type: 'text', text: 'Running them now.' }], 'end_turn');
  const call = answer(
    2,
    [
      {
        type: 'tool_use',
        id: 'toolu_grow1',
        name: 'Bash',
        input: { command: 'npm test', description: 'Run tests' },
      },
    ],
    'tool_use',
  );
  const result = line({
    type: 'user',
    message: {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_grow1', content: '12 passed', is_error: false }],
    },
    toolUseResult: { stdout: '12 passed', stderr: '', interrupted: false },
  });
  const closing = answer(3, [{ type: 'text', text: 'All 12 tests pass.' }], 'end_turn');
  const count = (text) => text.split('\n').length - 1;
  const sized = (text) => `${count(text)} line${count(text) === 1 ? '' : 's'}`;
  const round = call + result + closing;
  const withRecords = tail.last !== undefined;
  return [
    { name: `a new prompt (${sized(prompt)})`, lines: prompt, messages: 1 },
    {
      name: `the answer${withRecords ? ' with its record' : ''} (${sized(reply)})`,
      lines: reply,
      messages: 1,
    },
    {
      name: `a tool round trip${withRecords ? ' with its records' : ''} (${sized(round)})`,
      lines: round,
      messages: 3,
    },
  ];
}

async function ingest(root, db, name, scratch) {
  const run = await runNode(
    [join(here, 'measure.mjs'), cli, 'ingest', root, '--db', db, '--json'],
    join(scratch, name),
  );
  if (run.code !== 0) throw new Error(`ingest failed (exit ${run.code}):\n${run.stderr}`);
  return { seconds: run.seconds, cpu: cpuSeconds(run.usage), summary: JSON.parse(run.stdout).paths[0] };
}

/**
 * What a live Codex thread appends between two ingests, as Codex writes it: a new prompt (the user item and its
 * event), the model's answer (reasoning, message, token count) and a tool round trip (a call, its token count,
 * the output, the closing answer and its count). `messages`: how many messages each adds.
 */
function codexSteps(file) {
  const text = readFileSync(file, 'utf8');
  const last = JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1));
  let clock = Date.parse(last.timestamp);
  let total = 10_000_000;
  const line = (type, payload) => {
    clock += 1_000;
    return `${JSON.stringify({ timestamp: new Date(clock).toISOString(), type, payload })}\n`;
  };
  const tokens = () => {
    const last_token_usage = {
      input_tokens: 30_000,
      cached_input_tokens: 29_000,
      output_tokens: 120,
      reasoning_output_tokens: 40,
      total_tokens: 30_120,
    };
    total += 30_120;
    return line('event_msg', {
      type: 'token_count',
      info: { total_token_usage: { ...last_token_usage, total_tokens: total }, last_token_usage },
    });
  };
  const say = (words) =>
    line('response_item', {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: words }],
    });
  const prompt =
    line('response_item', {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'one more thing: run the tests again' }],
    }) +
    line('event_msg', { type: 'user_message', message: 'one more thing: run the tests again', images: [] });
  const reasoning = line('response_item', {
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: '**Running the tests**' }],
    content: null,
    encrypted_content: 'gAAAAABgrow',
  });
  const reply = reasoning + say('Running them now.') + tokens();
  // A new model turn needs new input: the round trip answers a second prompt.
  const again = (words) =>
    line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: words }] }) +
    line('event_msg', { type: 'user_message', message: words, images: [] });
  const round =
    again('and the linter') +
    line('response_item', {
      type: 'function_call',
      name: 'exec_command',
      arguments: JSON.stringify({ cmd: 'npm test', workdir: '/repo' }),
      call_id: 'call_grow1',
    }) +
    tokens() +
    line('response_item', { type: 'function_call_output', call_id: 'call_grow1', output: '12 passed' }) +
    say('All 12 tests pass.') +
    tokens();
  return promptAnswerRound(prompt, reply, round);
}

/**
 * What a live Gemini CLI session appends between two ingests, as the CLI writes it: a prompt (a user message and
 * its `$set` of lastUpdated), the model's answer, and a prompt with a tool round trip (the model message written
 * once with its text and again with its finished call, the results as a user message, the closing answer).
 */
function geminiSteps(file) {
  const text = readFileSync(file, 'utf8');
  const last = JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1));
  let clock = Date.parse(last.timestamp ?? last.$set?.lastUpdated ?? '2026-06-01T00:00:00.000Z');
  let n = 0;
  const stamp = () => {
    clock += 1_000;
    return new Date(clock).toISOString();
  };
  const record = (value) => {
    const timestamp = stamp();
    return `${JSON.stringify({ ...value, timestamp })}\n${JSON.stringify({ $set: { lastUpdated: timestamp } })}\n`;
  };
  const id = () => `0b5ad7e0-0000-4000-8000-${String(++n).padStart(12, '0')}`;
  const tokens = { input: 30_000, output: 120, cached: 29_000, thoughts: 40, tool: 0, total: 30_160 };
  const user = (words) => record({ id: id(), type: 'user', content: [{ text: words }] });
  const model = (words, more = {}) =>
    record({
      id: more.id ?? id(),
      type: 'gemini',
      content: words,
      thoughts: [],
      tokens,
      model: 'gemini-2.5-pro',
      ...more,
    });
  const prompt = user('one more thing: run the tests again');
  const reply = model('Running them now.');
  const callId = 'run_shell_command_1796999999999_0';
  const result = [
    { functionResponse: { id: callId, name: 'run_shell_command', response: { output: '12 passed' } } },
  ];
  const step = id();
  const round =
    user('and the linter') +
    model('Running the linter.', { id: step }) +
    model('Running the linter.', {
      id: step,
      toolCalls: [
        {
          id: callId,
          name: 'run_shell_command',
          args: { command: 'npm run lint' },
          result,
          status: 'success',
        },
      ],
    }) +
    record({ id: id(), type: 'user', content: result }) +
    model('The linter is clean.');
  return promptAnswerRound(prompt, reply, round);
}

/**
 * What a live Qwen Code session appends between two ingests: records chained to the one before, a prompt, the
 * model's answer after its api_response telemetry, and a prompt with a tool round trip (the call, its result, the
 * closing answer).
 */
function qwenSteps(file) {
  const text = readFileSync(file, 'utf8');
  const last = JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1));
  let parent = last.uuid;
  let clock = Date.parse(last.timestamp);
  let n = 0;
  const record = (fields) => {
    const uuid = `0b5ad7e0-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    clock += 1_000;
    const value = {
      uuid,
      parentUuid: parent,
      sessionId: last.sessionId,
      timestamp: new Date(clock).toISOString(),
      cwd: last.cwd,
      version: last.version,
      ...fields,
    };
    parent = uuid;
    return `${JSON.stringify(value)}\n`;
  };
  const user = (words) =>
    record({ type: 'user', provenance: 'real_user', message: { role: 'user', parts: [{ text: words }] } });
  const telemetry = () =>
    record({
      type: 'system',
      provenance: 'system',
      subtype: 'ui_telemetry',
      systemPayload: {
        uiEvent: {
          'event.name': 'qwen-code.api_response',
          response_id: `resp-${n}`,
          input_token_count: 30_000,
          output_token_count: 120,
          cached_content_token_count: 29_000,
        },
      },
    });
  const model = (parts) =>
    telemetry() +
    record({
      type: 'assistant',
      provenance: 'assistant_output',
      model: 'qwen3-coder-plus',
      message: { role: 'model', parts },
    });
  const prompt = user('one more thing: run the tests again');
  const reply = model([{ text: 'Running them now.' }]);
  const id = 'call_grow_0';
  const round =
    user('and the linter') +
    model([{ functionCall: { id, name: 'run_shell_command', args: { command: 'npm run lint' } } }]) +
    record({
      type: 'tool_result',
      provenance: 'tool_result',
      message: {
        role: 'user',
        parts: [{ functionResponse: { id, name: 'run_shell_command', response: { output: 'clean' } } }],
      },
    }) +
    model([{ text: 'The linter is clean.' }]);
  return promptAnswerRound(prompt, reply, round);
}

/** The three steps of the Codex, Gemini CLI and Qwen Code runs: a prompt, the answer, a prompt and a tool round trip. */
function promptAnswerRound(prompt, reply, round) {
  const named = (what, lines) => {
    const n = lines.split('\n').length - 1;
    return `${what} (${n} line${n === 1 ? '' : 's'})`;
  };
  return [
    { name: named('a new prompt', prompt), lines: prompt, messages: 1 },
    { name: named('the answer', reply), lines: reply, messages: 1 },
    { name: named('a prompt and a tool round trip', round), lines: round, messages: 4 },
  ];
}

/** One run in one process: the first ingest, then each step appended and re-ingested (grow-child.mjs). */
async function inProcess(root, file, db, steps, scratch) {
  const stepsFile = join(scratch, 'steps.json');
  writeFileSync(stepsFile, JSON.stringify(steps));
  const run = await runNode(
    [join(here, 'grow-child.mjs'), join(repo, 'dist'), root, file, db, stepsFile],
    join(scratch, 'usage.json'),
  );
  if (run.code !== 0) throw new Error(`grow-child failed (exit ${run.code}):\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

function check(summary, messages, what) {
  if (summary.files.read !== 1 || summary.messages !== messages)
    throw new Error(
      `${what}: re-ingest read ${summary.files.read} file(s), added ${summary.messages} message(s); want 1 and ${messages}`,
    );
}

const scratch = mkdtempSync(join(tmpdir(), 'bench-grow-'));
try {
  log(`generating a corpus with a main transcript of at least ${want / MB} MB ...`);
  const source = transcript(scratch);
  const steps = codex
    ? codexSteps(source.path)
    : gemini
      ? geminiSteps(source.path)
      : qwen
        ? qwenSteps(source.path)
        : await growthSteps(source.path);
  const runsOf = { first: [], steps: steps.map(() => []), cliFirst: [], cliGrown: [] };
  const continued = steps.map(() => 0);
  const loads = [loadavg()[0]];
  const fresh = (i) => {
    const root = join(scratch, `run-${i}`, codex ? 'sessions' : gemini || qwen ? 'chats' : 'projects');
    const file = join(root, basename(dirname(source.path)), basename(source.path));
    mkdirSync(dirname(file), { recursive: true });
    copyFileSync(source.path, file);
    return { root, file, db: join(scratch, `run-${i}.db`) };
  };
  const clean = (i, db) => {
    removeDb(db);
    rmSync(join(scratch, `run-${i}`), { recursive: true, force: true });
  };
  for (let i = 0; i < runs; i++) {
    log(
      `run ${i + 1}/${runs}: in one process, first ingest of ${(source.size / MB).toFixed(1)} MB and ${steps.length} growths ...`,
    );
    let at = fresh(i);
    const run = await inProcess(at.root, at.file, at.db, steps, scratch);
    runsOf.first.push(run.first);
    run.steps.forEach((step, k) => {
      check(step.summary, steps[k].messages, step.name);
      continued[k] += step.summary.files.continued ?? 0;
      runsOf.steps[k].push(step);
    });
    clean(i, at.db);
    log(`run ${i + 1}/${runs}: the CLI in fresh processes, first ingest and one appended prompt ...`);
    at = fresh(i);
    runsOf.cliFirst.push(await ingest(at.root, at.db, 'first.json', scratch));
    appendFileSync(at.file, steps[0].lines);
    const again = await ingest(at.root, at.db, 'grown.json', scratch);
    check(again.summary, steps[0].messages, 'CLI');
    runsOf.cliGrown.push(again);
    clean(i, at.db);
    loads.push(loadavg()[0]);
  }
  const m = (list, key) => median(list.map((r) => r[key]));
  const figure = (list) => ({ seconds: m(list, 'seconds'), cpu: m(list, 'cpu') });
  const first = figure(runsOf.first);
  const ratio = (f, base) => ({ wall: f.seconds / base.seconds, cpu: f.cpu / base.cpu });
  const figures = {
    bytes: source.size,
    runs,
    load: { min: Math.min(...loads), max: Math.max(...loads) },
    first,
    steps: steps.map((step, k) => {
      const f = figure(runsOf.steps[k]);
      return { name: step.name, ...f, continued: `${continued[k]}/${runs}`, ratio: ratio(f, first) };
    }),
    cli: { first: figure(runsOf.cliFirst), grown: figure(runsOf.cliGrown) },
  };
  figures.cli.ratio = ratio(figures.cli.grown, figures.cli.first);
  if (values.json) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  else {
    const pct = (x) => `${(x * 100).toFixed(1)}%`;
    const ms = (s) => (s * 1000).toFixed(1);
    process.stdout.write(
      `ingest of a grown ${codex ? 'Codex rollout' : gemini ? 'Gemini CLI log' : qwen ? 'Qwen Code chat' : 'Claude Code transcript'} (${(source.size / MB).toFixed(1)} MB), median of ${runs}, load ${figures.load.min.toFixed(1)}–${figures.load.max.toFixed(1)}\n\n${table(
        [
          ['in one process', 'wall (ms)', 'CPU (ms)', '÷ first: wall', 'CPU', 'continued'],
          ['first ingest', ms(first.seconds), ms(first.cpu), '', '', ''],
          ...figures.steps.map((s) => [
            `re-ingest after ${s.name}`,
            ms(s.seconds),
            ms(s.cpu),
            pct(s.ratio.wall),
            pct(s.ratio.cpu),
            s.continued,
          ]),
        ],
      )}\n\n${table([
        ['the CLI, a fresh node each', 'wall (ms)', 'CPU (ms)'],
        ['first ingest', ms(figures.cli.first.seconds), ms(figures.cli.first.cpu)],
        [`re-ingest after ${steps[0].name}`, ms(figures.cli.grown.seconds), ms(figures.cli.grown.cpu)],
        ['re-ingest ÷ first', pct(figures.cli.ratio.wall), pct(figures.cli.ratio.cpu)],
      ])}\n\ntarget: a re-ingest costs < 5% of the first ingest (in one process; the CLI adds node's start-up to both)\n`,
    );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
