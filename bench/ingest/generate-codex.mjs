#!/usr/bin/env node
// Deterministic generator of a large, realistic Codex CLI corpus for the ingest benchmark.
//
// Modelled on the real Codex Desktop 0.104 rollouts in /work/shared/fixtures/codex (their redaction markers keep
// the original length of every text, so the sizes below are the unredacted ones): a session_meta holding the
// ~13 KB system prompt; developer/AGENTS.md/environment context items; per model call a turn_context of ~12 KB
// (it repeats the user and developer instructions), reasoning with encrypted_content, a commentary message, one
// or a few calls (exec_command, apply_patch as custom_tool_call, MCP tools, web_search_call), token_count written
// twice, then heavy-tailed outputs; event_msg mirrors of prompts, answers and reasoning summaries; pasted
// screenshots as data URLs (the multi-megabyte lines); interrupted turns; compactions (a `compacted` line whose
// replacement_history copies earlier prompts and answers, regenerates the context and ends with an encrypted
// compaction item); and sub-agents spawned with spawn_agent, whose rollouts start, for some, with a copy of the
// parent's session_meta and history (re-stamped), as real sub-agent and fork rollouts do.
//
// Module: `generate({ dir, megabytes, seed })` → { files, bytes, lines, largestFile, sessions, toolUses, … }
// (1 MB = 10^6 bytes). `toolUses` counts each call once: the calls of a copied history are the parent's.
// CLI:    node bench/ingest/generate-codex.mjs --dir /tmp/corpus --megabytes 50 [--seed 1]

import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JsonlWriter } from './jsonl-writer.mjs';
import { B64, HEX, Rng } from './random.mjs';

const MB = 1e6;

// ---------------------------------------------------------------------------------------------------------
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, Math.round(v)));

// ---------------------------------------------------------------------------------------------------------
// Text pools, built once from a fixed seed (prose, code, shell output with quotes, tabs and non-ASCII).

const poolRng = new Rng('codex-text-pools-v1');
const WORDS = (
  'the a to of and in is it that for on with this we be as not are can file test session message tool ' +
  'function module call result error value return data state user model output input line path check ' +
  'update add remove fix build run config handle parse read write store query index schema migration ' +
  'render view component event handler request response server client cache token stream buffer chunk ' +
  'should would could need want will now then also just only first next last each every all some any ' +
  'implement refactor rename move split merge extract inline review plan approach issue bug feature'
).split(' ');
const IDENTS =
  'cart order item total tax price sku user session store repo client queue job payload ctx row'.split(' ');
const sentence = (rng) => {
  const n = rng.int(5, 20);
  const words = [];
  for (let i = 0; i < n; i++) words.push(rng.pick(WORDS));
  const s = words.join(' ');
  return `${s[0].toUpperCase()}${s.slice(1)}${rng.pick(['.', '.', ':', '?', ' —'])}`;
};
const makePool = (n, make) => Array.from({ length: n }, make);
const PROSE = makePool(1500, () => `${sentence(poolRng)} ${sentence(poolRng)}`);
const CODE = makePool(3000, () => {
  const indent = ' '.repeat(poolRng.pick([0, 2, 4, 4, 6]));
  const id = () => poolRng.pick(IDENTS);
  return (
    indent +
    poolRng.pick([
      () => `export function ${id()}(${id()}: ${id()}[]): number {`,
      () => `const ${id()} = await ${id()}.${id()}(${id()}, { ${id()}: ${poolRng.int(0, 999)} });`,
      () =>
        `if (${id()}.length > ${poolRng.int(1, 64)}) return "${poolRng.pick(WORDS)}\\t${poolRng.pick(WORDS)}";`,
      () => `// ${sentence(poolRng)}`,
      () => `expect(${id()}.${id()}).toEqual(${poolRng.int(0, 99)});`,
      () => '}',
      () => '',
    ])()
  );
});
const SHELL = makePool(2000, () =>
  poolRng.pick([
    () => ` ✓ test/${poolRng.pick(IDENTS)}.test.ts (${poolRng.int(1, 40)} tests) ${poolRng.int(2, 900)}ms`,
    () => `src/${poolRng.pick(IDENTS)}.ts:${poolRng.int(1, 400)}:${poolRng.int(1, 80)}: ${sentence(poolRng)}`,
    () =>
      `-rw-r--r--  1 ada staff ${poolRng.int(100, 99999)} Mar ${poolRng.int(1, 28)} ${poolRng.pick(IDENTS)}.ts`,
    () => `${poolRng.chars(HEX, 7)} ${sentence(poolRng)}`,
    () => `${poolRng.int(10, 999)} passed, ${poolRng.int(0, 3)} failed`,
    () => '',
  ])(),
);
/** A long random base64 stretch; encrypted content and images are windows of it (random bytes cost too much). */
const NOISE = poolRng.chars(B64, 1 << 16);

function fill(rng, pool, bytes) {
  const out = [];
  let size = 0;
  let at = rng.int(0, pool.length - 1);
  while (size < bytes) {
    if (rng.chance(0.1)) at = rng.int(0, pool.length - 1);
    const line = pool[at++ % pool.length];
    out.push(line);
    size += line.length + 1;
  }
  return out.join('\n');
}

function noise(rng, n) {
  let s = '';
  while (s.length < n) {
    const at = rng.int(0, NOISE.length - 1);
    s += NOISE.slice(at, at + Math.min(n - s.length, NOISE.length - at));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------------------
// Output

class Stats {
  constructor() {
    this.mix = {};
    this.files = 0;
    this.bytes = 0;
    this.lines = 0;
    this.largestFile = 0;
    this.sessions = { main: 0, subagent: 0, compaction: 0 };
    this.toolUses = 0;
    this.copiedHistories = 0;
    this.copiedLines = 0;
    this.compactions = 0;
    this.interrupted = 0;
    this.images = 0;
    this.hugeLines = 0;
  }
  add(kind, bytes) {
    const entry = this.mix[kind] ?? { lines: 0, bytes: 0 };
    entry.lines++;
    entry.bytes += bytes;
    this.mix[kind] = entry;
    this.bytes += bytes;
    this.lines++;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Projects and the fixed texts Codex writes into every session.

const MODELS = [
  [6, 'gpt-5.3-codex'],
  [3, 'gpt-5.2-codex'],
  [1, 'gpt-5.1-codex-max'],
];
const VERSIONS = [
  [2, '0.104.0-alpha.1'],
  [3, '0.120.0'],
  [2, '0.131.2'],
];
const textRng = new Rng('codex-fixed-texts-v1');
const BASE_INSTRUCTIONS = fill(textRng, PROSE, 13_100);
const DEVELOPER_INSTRUCTIONS = fill(textRng, PROSE, 6_680);
const COLLABORATION = fill(textRng, PROSE, 760);
const permissions = (mode) =>
  `<permissions instructions>\nFilesystem sandboxing: ${mode}. ${fill(textRng, PROSE, 4_400)}\n</permissions instructions>`;
const PERMISSIONS = permissions('workspace-write');
const PERMISSIONS_AFTER_COMPACTION = permissions('workspace-write, network restricted');

function makeProject(rng, index) {
  const cwd = `/home/ada/src/${rng.pick(['shop', 'billing', 'api', 'web', 'infra', 'docs'])}-${index}`;
  const agents = `# AGENTS.md instructions for ${cwd}\n\n<INSTRUCTIONS>\n${fill(rng, PROSE, rng.int(2_500, 5_200))}\n</INSTRUCTIONS>`;
  return {
    cwd,
    agents,
    userInstructions: agents.slice(0, rng.int(2_900, 5_200)),
    environment: `<environment_context>\n  <cwd>${cwd}</cwd>\n  <shell>zsh</shell>\n</environment_context>`,
    mcp: rng.pick(['cloud-associates', 'linear', 'github', 'postgres']),
  };
}

/** A UUIDv7: the first 48 bits are the creation time, as Codex thread and turn ids are. */
function uuid7(rng, ms) {
  const t = ms.toString(16).padStart(12, '0');
  const r = rng.chars(HEX, 20);
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${r.slice(0, 3)}-${HEX[8 + rng.int(0, 3)]}${r.slice(3, 6)}-${r.slice(6, 18)}`;
}

const iso = (ms) => new Date(ms).toISOString();
const stamp = (ms) => iso(ms).slice(0, 19).replace(/:/g, '-');
const rolloutPath = (root, ms, id) => {
  const d = iso(ms);
  return join(
    root,
    'sessions',
    d.slice(0, 4),
    d.slice(5, 7),
    d.slice(8, 10),
    `rollout-${stamp(ms)}-${id}.jsonl`,
  );
};

// ---------------------------------------------------------------------------------------------------------
// One rollout.

class Rollout {
  constructor(g, { rng, id, project, model, version, clock, source, writer }) {
    Object.assign(this, { g, rng, id, project, model, version, clock, source, writer });
    this.totals = {
      input_tokens: 0,
      cached_input_tokens: 0,
      output_tokens: 0,
      reasoning_output_tokens: 0,
      total_tokens: 0,
    };
    this.context = 8_000;
    /** Lines kept while the file is small, so a sub-agent can start with a copy of them. */
    this.history = [];
    this.keepHistory = true;
    this.prompts = [];
    this.answers = [];
    this.sinceCompaction = 0;
    this.compactEvery = rng.int(3, 6) * MB;
    this.calls = 0;
  }

  line(kind, type, payload) {
    this.clock += this.rng.int(1, 40);
    const text = `{"timestamp":"${iso(this.clock)}","type":"${type}","payload":${JSON.stringify(payload)}}`;
    this.writer.write(kind, text);
    this.sinceCompaction += text.length;
    if (this.keepHistory) {
      this.history.push(text);
      if (this.writer.bytes > 3 * MB) {
        this.keepHistory = false;
        this.history = [];
      }
    }
  }
  item(kind, payload) {
    this.line(kind, 'response_item', payload);
  }
  event(payload) {
    this.line(`event_msg/${payload.type}`, 'event_msg', payload);
  }
  get bytes() {
    return this.writer.bytes;
  }

  meta() {
    const payload = {
      id: this.id,
      timestamp: iso(this.clock),
      cwd: this.project.cwd,
      originator: 'codex_cli_rs',
      cli_version: this.version,
      source: this.source ?? 'cli',
      model_provider: 'openai',
      base_instructions: { text: BASE_INSTRUCTIONS },
      git: { commit_hash: this.rng.chars(HEX, 40), branch: 'main', repository_url: null },
    };
    if (this.source?.subagent) {
      const spawn = this.source.subagent.thread_spawn;
      Object.assign(payload, {
        thread_source: 'subagent',
        agent_nickname: spawn.agent_nickname,
        agent_role: spawn.agent_role,
      });
    }
    this.line('session_meta', 'session_meta', payload);
  }

  initialContext() {
    const message = (role, text) => ({ type: 'message', role, content: [{ type: 'input_text', text }] });
    this.item('response_item/message:developer', message('developer', PERMISSIONS));
    this.item('response_item/message:developer', message('developer', COLLABORATION));
    this.item('response_item/message:user', message('user', this.project.agents));
    this.item('response_item/message:user', message('user', this.project.environment));
  }

  turnContext() {
    this.line('turn_context', 'turn_context', {
      turn_id: this.turnId,
      cwd: this.project.cwd,
      approval_policy: 'on-request',
      sandbox_policy: { type: 'workspace-write', writable_roots: [this.project.cwd], network_access: false },
      model: this.model,
      personality: 'pragmatic',
      collaboration_mode: {
        mode: 'default',
        settings: { model: this.model, reasoning_effort: 'medium', developer_instructions: COLLABORATION },
      },
      effort: 'medium',
      summary: 'auto',
      user_instructions: this.project.userInstructions,
      developer_instructions: DEVELOPER_INSTRUCTIONS,
      truncation_policy: { mode: 'tokens', limit: 10000 },
    });
  }

  /** One model response's usage, written twice (the second after the outputs) as Codex does. */
  tokenCount(output) {
    const input = this.context;
    const cached = Math.floor(input * this.rng.next() * 0.95);
    const last = {
      input_tokens: input,
      cached_input_tokens: cached,
      output_tokens: output,
      reasoning_output_tokens: Math.floor(output / 3),
      total_tokens: input + output,
    };
    for (const key of Object.keys(this.totals)) this.totals[key] += last[key];
    this.lastCount = {
      type: 'token_count',
      info: { total_token_usage: { ...this.totals }, last_token_usage: last, model_context_window: 258400 },
      rate_limits: {
        limit_id: 'codex',
        primary: { used_percent: this.rng.int(1, 90), window_minutes: 300, resets_at: 1771890497 },
        secondary: { used_percent: this.rng.int(1, 90), window_minutes: 10080, resets_at: 1772355702 },
        credits: { has_credits: false, unlimited: false, balance: null },
        plan_type: null,
      },
    };
    this.event(this.lastCount);
    this.context += output + this.rng.int(200, 3000);
  }

  reasoning() {
    const summary = sentence(this.rng).slice(0, this.rng.int(30, 120));
    this.event({ type: 'agent_reasoning', text: summary });
    this.item('response_item/reasoning', {
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: summary }],
      content: null,
      encrypted_content: `gAAAAA${noise(this.rng, clamp(this.rng.logNormal(1_400, 0.7), 300, 17_000))}`,
    });
  }

  said(text, phase) {
    this.event({ type: 'agent_message', message: text, phase });
    const payload = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text }], phase };
    this.item('response_item/message:assistant', payload);
    return payload;
  }

  prompt(text) {
    const content = [{ type: 'input_text', text }];
    const images = [];
    // A pasted screenshot now and then: the multi-megabyte lines of real rollouts.
    if (this.rng.chance(0.015) || this.forceImage) {
      const size = this.forceImage ? 2_500_000 : clamp(this.rng.logNormal(250_000, 1), 30_000, 3_000_000);
      const url = `data:image/png;base64,iVBORw0KGgo${noise(this.rng, size)}`;
      content.push(
        { type: 'input_text', text: '<image>' },
        { type: 'input_image', image_url: url },
        { type: 'input_text', text: '</image>' },
      );
      images.push(url);
      this.g.stats.images++;
      this.forceImage = false;
    }
    const payload = { type: 'message', role: 'user', content };
    this.item('response_item/message:user', payload);
    this.event({ type: 'user_message', message: text, images, local_images: [], text_elements: [] });
    return payload;
  }

  callOutput(call) {
    const rng = this.rng;
    const size = clamp(rng.logNormal(560, 1.6), 20, 90_000);
    if (call.kind === 'custom') {
      this.item('response_item/custom_tool_call_output', {
        type: 'custom_tool_call_output',
        call_id: call.id,
        output: `Success. Updated the following files:\nM src/${rng.pick(IDENTS)}.ts\n`,
      });
      return;
    }
    let output;
    if (call.name === 'view_image')
      output = [
        {
          type: 'input_image',
          image_url: `data:image/png;base64,${noise(rng, clamp(rng.logNormal(40_000, 0.8), 4_000, 400_000))}`,
        },
      ];
    else if (call.name.startsWith('mcp__'))
      output = JSON.stringify({ content: [{ type: 'text', text: fill(rng, PROSE, size) }], isError: false });
    else
      output = `Chunk ID: ${rng.chars(HEX, 6)}\nWall time: ${(rng.next() * 9).toFixed(4)} seconds\nProcess exited with code ${rng.chance(0.85) ? 0 : 1}\nOriginal token count: ${Math.ceil(size / 4)}\nOutput:\n${fill(rng, rng.chance(0.5) ? SHELL : CODE, size)}`;
    this.item('response_item/function_call_output', {
      type: 'function_call_output',
      call_id: call.id,
      output,
    });
  }

  newCall() {
    this.calls++;
    this.g.stats.toolUses++;
    return `call_${this.rng.chars(B62, 24)}`;
  }

  /** One model call: reasoning, maybe commentary, 1–4 calls; token counts; the outputs. Returns false if cut off. */
  step() {
    const rng = this.rng;
    this.turnContext();
    if (rng.chance(0.8)) this.reasoning();
    if (rng.chance(0.85))
      this.said(fill(rng, PROSE, clamp(rng.logNormal(180, 0.9), 30, 4_000)), 'commentary');
    const calls = [];
    const n = rng.chance(0.15) ? rng.int(2, 4) : 1;
    for (let i = 0; i < n; i++) {
      const kind = rng.weighted([
        [70, 'exec'],
        [13, 'patch'],
        [9, 'mcp'],
        [2, 'image'],
        [1, 'search'],
      ]);
      if (kind === 'search') {
        this.calls++;
        this.g.stats.toolUses++;
        this.item('response_item/web_search_call', {
          type: 'web_search_call',
          status: 'completed',
          action: { type: 'search', query: sentence(rng).slice(0, 80) },
        });
        continue;
      }
      const id = this.newCall();
      if (kind === 'patch') {
        const body = fill(rng, CODE, clamp(rng.logNormal(1_300, 1), 100, 28_000));
        this.item('response_item/custom_tool_call', {
          type: 'custom_tool_call',
          status: 'completed',
          call_id: id,
          name: 'apply_patch',
          input: `*** Begin Patch\n*** Update File: src/${rng.pick(IDENTS)}.ts\n@@\n${body}\n*** End Patch\n`,
        });
        calls.push({ id, kind: 'custom' });
        continue;
      }
      const name =
        kind === 'exec'
          ? 'exec_command'
          : kind === 'image'
            ? 'view_image'
            : `mcp__${this.project.mcp}__${rng.pick(['search', 'get', 'execute_workflow'])}`;
      let args = JSON.stringify(
        kind === 'exec'
          ? {
              cmd: `${rng.pick(['rg -n', 'sed -n 1,200p', 'npm test --', 'git diff --', 'ls -la'])} src/${rng.pick(IDENTS)}.ts`,
              workdir: this.project.cwd,
              yield_time_ms: 10000,
              max_output_tokens: 6000,
            }
          : kind === 'image'
            ? { path: `docs/${rng.pick(IDENTS)}.png` }
            : { query: sentence(rng), limit: rng.int(1, 50) },
      );
      // The model now and then writes arguments that are not JSON.
      if (rng.chance(0.004)) args = args.slice(0, -3);
      this.item('response_item/function_call', { type: 'function_call', name, arguments: args, call_id: id });
      calls.push({ id, name, kind: 'function' });
    }
    this.tokenCount(rng.int(40, 900));
    // An interrupted turn: the last call never gets its output.
    if (calls.length > 0 && rng.chance(0.004)) {
      for (const call of calls.slice(0, -1)) this.callOutput(call);
      this.event({ type: 'turn_aborted', turn_id: this.turnId, reason: 'interrupted' });
      this.g.stats.interrupted++;
      return false;
    }
    for (const call of calls) this.callOutput(call);
    this.event({ ...this.lastCount, rate_limits: this.lastCount.rate_limits });
    return true;
  }

  /** A task: the prompt, model calls until the final answer. `budget` bounds its bytes. */
  task(budget, spawn) {
    const rng = this.rng;
    const start = this.bytes;
    this.turnId = uuid7(rng, this.clock);
    this.event({
      type: 'task_started',
      turn_id: this.turnId,
      model_context_window: 258400,
      collaboration_mode_kind: 'default',
    });
    const prompt = this.prompt(fill(rng, PROSE, clamp(rng.logNormal(160, 1.2), 5, 6_000)));
    const steps = clamp(rng.logNormal(7, 0.9), 1, 60);
    for (let s = 0; s < steps && this.bytes - start < budget; s++) {
      if (!this.step()) return;
      if (spawn && s === 0) spawn();
      this.clock += rng.int(500, 30_000);
      if (this.sinceCompaction > this.compactEvery) this.compact();
    }
    this.turnContext();
    this.reasoning();
    const answer = this.said(fill(rng, PROSE, clamp(rng.logNormal(600, 1), 40, 8_000)), 'final_answer');
    this.tokenCount(rng.int(80, 1_500));
    this.event({ type: 'task_complete', turn_id: this.turnId, last_agent_message: answer.content[0].text });
    this.prompts.push(prompt);
    this.answers.push(answer);
  }

  /** Remote compaction: recent prompts and answers copied, context regenerated, the encrypted summary last. */
  compact() {
    const message = (role, text) => ({ type: 'message', role, content: [{ type: 'input_text', text }] });
    const recent = Math.min(this.prompts.length, 10);
    const history = [];
    for (let i = this.prompts.length - recent; i < this.prompts.length; i++)
      history.push(this.prompts[i], this.answers[i]);
    history.push(
      message('developer', PERMISSIONS_AFTER_COMPACTION),
      message('developer', COLLABORATION),
      message('user', this.project.agents),
      message('user', this.project.environment),
      { type: 'compaction', encrypted_content: `gAAAAA${noise(this.rng, this.rng.int(8_000, 16_000))}` },
    );
    this.event({
      ...this.lastCount,
      info: {
        ...this.lastCount.info,
        last_token_usage: {
          input_tokens: 0,
          cached_input_tokens: 0,
          output_tokens: 0,
          reasoning_output_tokens: 0,
          total_tokens: this.context,
        },
      },
    });
    this.line('compacted', 'compacted', { message: '', replacement_history: history });
    this.event({ type: 'context_compacted' });
    this.g.stats.compactions++;
    this.sinceCompaction = 0;
    this.context = 20_000;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Sessions

function runSession(g, { rng, project, clock, target, image = false }) {
  const id = uuid7(rng, clock);
  const session = new Rollout(g, {
    rng,
    id,
    project,
    model: rng.weighted(MODELS),
    version: rng.weighted(VERSIONS),
    clock,
    writer: new JsonlWriter(rolloutPath(g.root, clock, id), g.stats),
  });
  g.stats.sessions.main++;
  session.meta();
  session.initialContext();
  let forced = image;
  while (session.bytes < target) {
    if (forced && session.bytes > target / 2) {
      session.forceImage = true;
      forced = false;
    }
    // Some tasks delegate to a sub-agent right after their first model call.
    const delegates = rng.chance(0.08);
    session.task(target - session.bytes, delegates ? () => spawnChild(g, session) : undefined);
    session.clock += rng.int(60_000, 3_600_000);
  }
  session.writer.close(session.clock);
}

const NICKNAMES = ['Sartre', 'Averroes', 'Hypatia', 'Noether', 'Turing', 'Lovelace', 'Hopper', 'Curie'];

/**
 * spawn_agent in its own model turn, the child's rollout, then wait_agent. A child given the parent's context
 * (40%, while the parent is under 3 MB) starts with a copy of the parent's session_meta and of every line the
 * parent wrote before the spawning turn, re-stamped.
 */
function spawnChild(g, parent) {
  const rng = parent.rng;
  const copyUpTo = parent.keepHistory && rng.chance(0.4) ? parent.history.length : 0;
  parent.turnContext();
  parent.reasoning();
  const call = parent.newCall();
  const message = fill(rng, PROSE, rng.int(60, 600));
  const role = rng.pick(['explorer', 'worker', 'reviewer']);
  const nickname = rng.pick(NICKNAMES);
  parent.item('response_item/function_call', {
    type: 'function_call',
    name: 'spawn_agent',
    arguments: JSON.stringify({ agent_type: role, message }),
    call_id: call,
  });
  parent.tokenCount(rng.int(40, 300));
  const childId = uuid7(rng, parent.clock);
  parent.event({
    type: 'collab_agent_spawn_end',
    call_id: call,
    sender_thread_id: parent.id,
    new_thread_id: childId,
    new_agent_nickname: nickname,
    new_agent_role: role,
    prompt: message,
  });
  parent.item('response_item/function_call_output', {
    type: 'function_call_output',
    call_id: call,
    output: JSON.stringify({ agent_id: childId, nickname }),
  });

  const crng = rng.fork(`child-${childId}`);
  const source = {
    subagent: {
      thread_spawn: {
        parent_thread_id: parent.id,
        depth: 1,
        agent_path: null,
        agent_nickname: nickname,
        agent_role: role,
      },
    },
  };
  const child = new Rollout(g, {
    rng: crng,
    id: childId,
    project: parent.project,
    model: parent.model,
    version: parent.version,
    clock: parent.clock + 5,
    source,
    writer: new JsonlWriter(rolloutPath(g.root, parent.clock + 5, childId), g.stats),
  });
  child.keepHistory = false;
  g.stats.sessions.subagent++;
  child.meta();
  if (copyUpTo > 0) {
    const at = iso(child.clock);
    // Every line opens with {"timestamp":"<24 characters>": the copy gets the child's time.
    for (const text of parent.history.slice(0, copyUpTo)) {
      child.writer.write('copied parent history', `{"timestamp":"${at}"${text.slice(39)}`);
      g.stats.copiedLines++;
    }
    g.stats.copiedHistories++;
  } else child.initialContext();
  child.task(clamp(crng.logNormal(80_000, 1), 5_000, 2 * MB));
  child.writer.close(child.clock);

  parent.clock = Math.max(parent.clock, child.clock) + 50;
  parent.turnContext();
  const wait = parent.newCall();
  parent.item('response_item/function_call', {
    type: 'function_call',
    name: 'wait_agent',
    arguments: JSON.stringify({ targets: [childId], timeout_ms: 600000 }),
    call_id: wait,
  });
  parent.tokenCount(rng.int(20, 100));
  const answer = child.answers.at(-1)?.content[0].text ?? '';
  parent.item('response_item/function_call_output', {
    type: 'function_call_output',
    call_id: wait,
    output: JSON.stringify({ status: { [childId]: { completed: { message: answer } } } }),
  });
}

export function generate({ dir, megabytes, seed = 1 }) {
  if (!dir) throw new Error('generate: dir is required');
  const root = resolve(dir);
  const rng = new Rng(`codex-corpus/${seed}`);
  const stats = new Stats();
  const g = { root, stats };
  const targetBytes = megabytes * MB;
  const projects = Array.from({ length: 3 + Math.ceil(megabytes / 20) }, (_, i) =>
    makeProject(rng.fork(`project${i}`), i),
  );
  const weights = projects.map((p, i) => [1 / (i + 1), p]);
  // One long "marathon" session of a fixed size (20 MB from a 50 MB corpus up) fixes the largest file, which
  // bounds the ingest's per-file memory; the rest are heavy-tailed, a few KB to 12 MB.
  const marathon = Math.min(20 * MB, 0.4 * targetBytes);
  const start = Date.parse('2026-01-05T08:00:00.000Z');
  let index = 0;
  while (stats.bytes < targetBytes) {
    const srng = rng.fork(`session${index}`);
    const wanted = index === 0 ? marathon : clamp(srng.logNormal(300_000, 1.6), 5_000, 12 * MB);
    const target = Math.max(5_000, Math.min(wanted, targetBytes - stats.bytes));
    const clock = start + Math.floor(srng.next() * 60 * 86_400_000);
    runSession(g, { rng: srng, project: srng.weighted(weights), clock, target, image: index === 0 });
    index++;
  }
  return {
    files: stats.files,
    bytes: stats.bytes,
    lines: stats.lines,
    largestFile: stats.largestFile,
    // No sidecar files and no inline mirrors in this format (fields the runner reads for Claude Code).
    sidecars: 0,
    mirroredAgents: 0,
    mirroredToolUses: 0,
    projects: projects.length,
    sessions: stats.sessions,
    toolUses: stats.toolUses,
    copiedHistories: stats.copiedHistories,
    copiedLines: stats.copiedLines,
    compactions: stats.compactions,
    interrupted: stats.interrupted,
    images: stats.images,
    hugeLines: stats.hugeLines,
    mix: stats.mix,
  };
}

// ---------------------------------------------------------------------------------------------------------

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      megabytes: { type: 'string', default: '50' },
      seed: { type: 'string', default: '1' },
    },
  });
  if (!values.dir) {
    process.stderr.write(
      'usage: node bench/ingest/generate-codex.mjs --dir DIR [--megabytes 50] [--seed 1]\n',
    );
    process.exit(2);
  }
  const started = performance.now();
  const result = generate({ dir: values.dir, megabytes: Number(values.megabytes), seed: values.seed });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
