#!/usr/bin/env node
// Deterministic generator of a large, realistic Claude Code corpus for the ingest benchmark.
//
// The shapes and the line mix are modelled on the real 2.1.3x transcripts in
// /work/shared/fixtures/claude-code (spotter-258c7280.jsonl and its sub-agents): per API response one line per
// content block (same message.id, usage on each line), PreToolUse/PostToolUse/Stop hook_progress lines chained
// into the uuid tree, tool results hanging off the assistant line that made the call (so parallel calls leave
// siblings), toolUseResult objects that duplicate the output, bash_progress with a growing fullOutput,
// agent_progress mirrors of sub-agents, file-history-snapshot / queue-operation lines without uuid, and
// compaction (system/compact_boundary with parentUuid null + logicalParentUuid, an isCompactSummary user line
// and an `acompact-*` pseudo sub-agent file).
//
// With `requests: true` every transcript also holds the request records of Claude Code 2.1.3xx, as the real
// 2.1.328 transcripts in test/fixtures/real/claude-code-2.1.328 do: an `api-request-shape` (a ~7 KB system prompt
// and ~30 KB of tools) at the start of each chain (session, sub-agent, after a compaction), an `api-request-blob`
// for the harness's system message there, and before each API response an `api-request` whose tail hashes
// the messages appended since the previous one (the response, its results merged into one user message). They are
// drawn from their own generator and hashes, so the rest of the corpus is byte-for-byte what it is without them.
//
// Module: `generate({ dir, megabytes, seed, requests })` → { files, bytes, lines, ... } (1 MB = 10^6 bytes).
// CLI:    node bench/ingest/generate.mjs --dir /tmp/corpus --megabytes 50 [--seed 1] [--requests]

import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JsonlWriter } from './jsonl-writer.mjs';
import { B58, B64, Rng } from './random.mjs';

const MB = 1e6;

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

// ---------------------------------------------------------------------------------------------------------
// Text pools, built once from a fixed seed: realistic-looking prose, code and shell output (with the quotes,
// backslashes, tabs and non-ASCII characters that make JSON escaping and UTF-8 decoding do real work).

const WORDS = (
  'the a to of and in is it that for on with this we be as not are can file test session message tool ' +
  'function module call result error value return data state user model output input line path check ' +
  'update add remove fix build run config handle parse read write store query index schema migration ' +
  'render view component event handler request response server client cache token stream buffer chunk ' +
  'should would could need want will now then also just only first next last each every all some any ' +
  'because so but if when where while after before since until new old same other more less most ' +
  'implement refactor rename move split merge extract inline review plan approach issue bug feature ' +
  'looks like seems let me see now I the existing current works fails passes green red warning unused ' +
  'variable import export type interface class struct method field key map list set array string number'
).split(' ');
const IDENTS = (
  'session transcript message annotation renderer store repo changeset socket assigns params conn ' +
  'result entry entries chain parent uuid offset cursor reader writer parser lexer token node tree ' +
  'handler worker queue job payload attrs opts config ctx state acc item items row rows batch index'
).split(' ');
const EXTS = ['ex', 'exs', 'ts', 'tsx', 'js', 'py', 'rs', 'go', 'md', 'json', 'heex', 'css'];
const DIRS = ['lib', 'src', 'test', 'priv/repo/migrations', 'assets/js', 'web/live', 'internal', 'cmd'];

const poolRng = new Rng('text-pools-v1');
const word = () => poolRng.pick(WORDS);
const ident = () => poolRng.pick(IDENTS);
const Ident = () => {
  const s = ident();
  return s[0].toUpperCase() + s.slice(1);
};

function sentence(rng) {
  const n = rng.int(5, 22);
  const parts = [];
  for (let i = 0; i < n; i++) parts.push(rng.pick(WORDS));
  const s = parts.join(' ');
  return `${s[0].toUpperCase()}${s.slice(1)}${rng.pick(['.', '.', '.', ':', '?', ' —'])}`;
}

function makePool(n, make) {
  const pool = [];
  for (let i = 0; i < n; i++) pool.push(make());
  return pool;
}

const CODE = makePool(4000, () => {
  const indent = ' '.repeat(poolRng.pick([0, 2, 2, 4, 4, 4, 6, 8]));
  const templates = [
    () => `def ${ident()}(${ident()}, ${ident()}) do`,
    () => `${ident()} = ${Ident()}.${ident()}(${ident()}, "${word()}_${word()}")`,
    () =>
      `const ${ident()} = await ${ident()}.${ident()}(${ident()}, { ${ident()}: ${poolRng.int(0, 999)} });`,
    () => `import { ${Ident()}, ${Ident()} } from '../${ident()}/${ident()}.js';`,
    () => `if (${ident()} === null || ${ident()}.length > ${poolRng.int(1, 64)}) return ${ident()};`,
    () => `|> Enum.map(fn ${ident()} -> ${ident()}.${ident()} end)`,
    () => `expect(${ident()}.${ident()}).toEqual(${JSON.stringify(word())});`,
    () => `${ident()}.push(\`\${${ident()}}\\n\`);`,
    () => `# ${sentence(poolRng)}`,
    () => `// ${sentence(poolRng)}`,
    () => `"${word()}": "${word()} ${word()}\\t${word()}",`,
    () => `assert ${ident()} == %{${ident()}: ${poolRng.int(0, 99)}, ${ident()}: "${word()}"}`,
    () => `fn ${ident()}(&self, ${ident()}: &str) -> Result<${Ident()}, ${Ident()}Error> {`,
    () => `raise ArgumentError, "unexpected ${word()}: #{inspect(${ident()})}"`,
    () => '}',
    () => 'end',
    () => '',
  ];
  return indent + poolRng.pick(templates)();
});

const SHELL = makePool(3000, () =>
  poolRng.pick([
    () => `  ✓ test/${ident()}/${ident()}_test.exs (${poolRng.int(1, 40)} tests) ${poolRng.int(2, 900)}ms`,
    () =>
      `warning: variable "${ident()}" is unused (if the variable is not meant to be used, prefix it with an underscore)`,
    () => `  lib/${ident()}/${ident()}.ex:${poolRng.int(1, 400)}: ${Ident()}.${ident()}/${poolRng.int(0, 4)}`,
    () =>
      `-rw-r--r--  1 user staff  ${poolRng.int(100, 99999)} Feb ${poolRng.int(1, 28)} 1${poolRng.int(0, 9)}:${poolRng.int(10, 59)} ${ident()}.${poolRng.pick(EXTS)}`,
    () => `${poolRng.hex(7)} ${sentence(poolRng)}`,
    () => `Compiling ${poolRng.int(1, 90)} files (.ex)`,
    () =>
      `npm warn deprecated ${ident()}@${poolRng.int(0, 9)}.${poolRng.int(0, 20)}.${poolRng.int(0, 9)}: ${sentence(poolRng)}`,
    () => `  ${poolRng.int(1, 400)}) test ${word()} ${word()} ${word()} (${Ident()}Test)`,
    () => `     ** (MatchError) no match of right hand side value: {:error, "${word()} ${word()}"}`,
    () => `${poolRng.int(10, 999)} passed, ${poolRng.int(0, 3)} failed, ${poolRng.int(0, 9)} skipped`,
    () => `\t${ident()}/${ident()}.go:${poolRng.int(1, 300)} +0x${poolRng.hex(3)}`,
    () => `📋 [● P${poolRng.int(0, 3)}] [task] ${ident()}-${poolRng.hex(3)}: ${sentence(poolRng)}`,
    () => '',
  ])(),
);

const PROSE = makePool(2000, () => {
  const kind = poolRng.int(0, 9);
  if (kind === 0) return `## ${Ident()} ${word()} ${word()}`;
  if (kind <= 2) return `- **${Ident()}**: ${sentence(poolRng)} \`${ident()}.${ident()}()\``;
  if (kind === 3) return '';
  return `${sentence(poolRng)} ${sentence(poolRng)}`;
});

/** Lines from a pool until about `bytes` characters; a window of the pool keeps neighbouring lines coherent. */
function fill(rng, pool, bytes) {
  const out = [];
  let size = 0;
  let at = rng.int(0, pool.length - 1);
  while (size < bytes) {
    if (rng.chance(0.08)) at = rng.int(0, pool.length - 1);
    const line = pool[at % pool.length];
    at++;
    out.push(line);
    size += line.length + 1;
  }
  return out;
}
const prose = (rng, bytes) => fill(rng, PROSE, bytes).join('\n');
const code = (rng, bytes) => fill(rng, CODE, bytes);
const shell = (rng, bytes) => fill(rng, SHELL, bytes).join('\n');
/** Read's view of a file: `cat -n` style, 6-wide line numbers and an arrow. */
const numbered = (lines, first = 1) =>
  lines.map((line, i) => `${String(first + i).padStart(6)}→${line}`).join('\n');

// ---------------------------------------------------------------------------------------------------------
// Output: buffered JSONL writers that count bytes and lines per kind of line.

class Stats {
  constructor() {
    this.mix = {};
    this.files = 0;
    this.bytes = 0;
    this.lines = 0;
    this.largestFile = 0;
    this.sidecars = 0;
    this.sessions = { main: 0, subagent: 0, compaction: 0 };
    this.toolUses = 0;
    /** Tool calls that also appear in agent_progress mirrors (the ingest counts those sessions twice). */
    this.mirroredToolUses = 0;
    this.mirroredAgents = 0;
    this.compactions = 0;
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
// Projects: a cwd, the directory name Claude Code derives from it, files, branches and hook configuration.

const VERSIONS = [
  [2, '2.1.37'],
  [3, '2.1.38'],
  [4, '2.1.39'],
  [2, '2.1.41'],
];
const MODELS = [
  [6, 'claude-opus-4-6'],
  [3, 'claude-sonnet-4-5-20250929'],
];
// Hook commands hold shell variables as written in settings.json (built with join so no linter takes them for
// template placeholders).
const PLUGIN_ROOT = ['$', '{CLAUDE_PLUGIN_ROOT}'].join('');
const FILE_PATHS = ['$', '{CLAUDE_FILE_PATHS}'].join('');
const HOOK_COMMANDS = [
  '/home/USER/.claude/hooks/tmux-waiting.sh clear',
  `cd ${PLUGIN_ROOT}/hooks && bun run ./guardian.ts`,
  `${PLUGIN_ROOT}/scripts/post-tool-capture.sh`,
  `cd ${PLUGIN_ROOT}/hooks && bun run ./dist/on-stop-test.js`,
  `${PLUGIN_ROOT}/hooks/stop-hook.sh`,
  `mix format ${FILE_PATHS}`,
  'npx prettier --write "$CLAUDE_FILE_PATH"',
  '/home/USER/.claude/hooks/tmux-waiting.sh mark',
  'python3 ~/.claude/hooks/audit_log.py',
];

function makeProject(rng, index) {
  const name = `${rng.pick(IDENTS)}-${rng.pick(['web', 'api', 'cli', 'core', 'app', 'tools', 'infra'])}${index}`;
  const worktree = rng.chance(0.3);
  const cwd = worktree
    ? `/home/USER/projects/${name}-worktrees/${name}-${rng.chars('abcdefghijklmnopqrstuvwxyz', 3)}`
    : `/home/USER/projects/${name}`;
  const files = makePool(rng.int(30, 200), () => {
    const depth = rng.int(0, 2);
    const segments = [rng.pick(DIRS)];
    for (let i = 0; i < depth; i++) segments.push(rng.pick(IDENTS));
    return `${cwd}/${segments.join('/')}/${rng.pick(IDENTS)}_${rng.pick(IDENTS)}.${rng.pick(EXTS)}`;
  });
  // Most real setups run a few hooks on every tool call (the fixture: ~5.5 hook_progress lines per call).
  const hooked = rng.chance(0.85);
  const commands = (n) => makePool(n, () => rng.pick(HOOK_COMMANDS));
  return {
    cwd,
    // Claude Code names the project directory after the cwd with every non-alphanumeric character as '-'.
    slug: cwd.replace(/[^a-zA-Z0-9]/g, '-'),
    files,
    branches: ['main', 'master', `feat/${rng.pick(IDENTS)}`, `${name}-${rng.hex(3)}`],
    hooks: {
      sessionStart: commands(hooked ? rng.int(1, 3) : 0),
      pre: commands(hooked ? rng.int(1, 4) : 0),
      preTools: new Set(['Bash', 'Edit', 'Write', 'Read'].filter(() => rng.chance(0.75))),
      post: commands(hooked ? rng.int(1, 3) : 0),
      postEdit: commands(hooked ? rng.int(2, 5) : 0),
      stop: commands(hooked ? rng.int(1, 3) : 0),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// One transcript file being written: the main conversation, a sub-agent, or a compaction side call.

const MAIN_TOOLS = [
  [30, 'Bash'],
  [25, 'Read'],
  [16, 'Edit'],
  [6, 'Write'],
  [6, 'Grep'],
  [5, 'Glob'],
  [4, 'TodoWrite'],
  [2, 'WebFetch'],
  [2, 'WebSearch'],
  [2, 'Task'],
];
const SUB_TOOLS = [
  [35, 'Read'],
  [20, 'Grep'],
  [15, 'Glob'],
  [20, 'Bash'],
  [6, 'WebFetch'],
  [4, 'WebSearch'],
];

/** Tools whose output size is not drawn from the size distribution. */
const UNSIZED = new Set(['Glob', 'TodoWrite', 'Task']);

// ---------------------------------------------------------------------------------------------------------
// Request records (with `requests: true`)

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** JSON with sorted keys at every depth, as Claude Code hashes a message. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** A message's tail hash: string content counted as one text block. */
const tailHash = (message) =>
  sha256(
    canonical({
      ...message,
      content:
        typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content,
    }),
  );

const shapeRng = new Rng('request-shape-v1');
/** One shape for every chain: its size is what matters here (7 KB of system prompt, 10 tools of ~3 KB). */
const SHAPE = {
  system: [
    { type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." },
    { type: 'text', text: prose(shapeRng, 7000) },
  ],
  tools: [
    'Agent',
    'Bash',
    'Edit',
    'Glob',
    'Grep',
    'Read',
    'TodoWrite',
    'WebFetch',
    'DeferredToolPlaceholder',
    'Write',
  ].map((name) => ({
    name,
    description: prose(shapeRng, 2600),
    input_schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { file_path: { type: 'string', description: prose(shapeRng, 120) } },
      required: ['file_path'],
      additionalProperties: false,
    },
  })),
};
const SHAPE_HASH = sha256(canonical(SHAPE));
/** The harness's system message of a chain's first request (environment, model, agents, date). */
const HARNESS = {
  role: 'system',
  content: [{ type: 'text', text: prose(shapeRng, 3000) }],
  output_config: { effort: 'medium' },
};
const HARNESS_HASH = tailHash(HARNESS);
const PARAMS = {
  betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27'],
  max_tokens: 128000,
  thinking: { type: 'adaptive', display: 'updates' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  output_config: { effort: 'medium' },
};

/**
 * Watches the conversation lines a transcript writes and, before the first line of each API response, writes the
 * request record Claude Code 2.1.3xx would: its tail is every message appended since the previous request.
 */
class RequestRecorder {
  constructor(transcript) {
    this.t = transcript;
    this.count = 0;
    this.restart();
  }

  /** A new chain (the session's start, after a compaction): no base, the shape written again. */
  restart() {
    this.pending = [];
    this.sent = 0;
    this.base = undefined;
    this.response = undefined;
    this.userRun = false;
    this.shapeDue = true;
  }

  observe(kind, line) {
    if (line.type === 'system' && line.subtype === 'compact_boundary') {
      this.restart();
      return;
    }
    if (line.type === 'system') {
      this.userRun = false;
      return;
    }
    if (line.type === 'assistant' && line.message) {
      this.userRun = false;
      if (line.message.id !== this.response) {
        this.request();
        this.response = line.message.id;
        this.pending.push({ role: 'assistant', content: [...line.message.content] });
      } else this.pending.at(-1)?.content.push(...line.message.content);
      return;
    }
    if (line.type === 'user' && line.message && kind === 'user') {
      const last = this.pending.at(-1);
      if (this.userRun && last?.role === 'user') {
        const add = (c) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c);
        last.content = [...add(last.content), ...add(line.message.content)];
      } else this.pending.push({ role: 'user', content: line.message.content });
      this.userRun = true;
    }
  }

  request() {
    const t = this.t;
    const write = (kind, value) => t.writer.writeJsonRaw(kind, value);
    const common = { sessionId: t.sessionId, ...(t.agentId !== undefined ? { agentId: t.agentId } : {}) };
    if (this.shapeDue) {
      write('api-request-shape', {
        type: 'api-request-shape',
        ...common,
        shapeHash: SHAPE_HASH,
        timestamp: new Date(t.clock).toISOString(),
        version: t.version,
        shape: SHAPE,
      });
      write('api-request-blob', {
        type: 'api-request-blob',
        ...common,
        hash: HARNESS_HASH,
        message: HARNESS,
      });
      this.pending.splice(1, 0, HARNESS);
      this.shapeDue = false;
    }
    const id = sha256(`${t.sessionId}/${t.agentId ?? ''}/${this.count++}`);
    const tail = this.pending.map(tailHash);
    const record = {
      type: 'api-request',
      ...common,
      id: `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-8${id.slice(17, 20)}-${id.slice(20, 32)}`,
      timestamp: new Date(t.clock).toISOString(),
      version: t.version,
      querySource: t.agentId !== undefined ? 'agent:builtin:general-purpose' : 'sdk',
      shapeHash: SHAPE_HASH,
      params: { model: t.model, ...PARAMS },
      ...(this.base !== undefined ? { base: this.base } : {}),
      keep: this.sent,
      tail,
      cacheControl: [
        { path: ['system', 0], value: { type: 'ephemeral' } },
        { path: ['system', 1], value: { type: 'ephemeral' } },
        { path: ['messages', this.sent + tail.length - 1, 'content', 0], value: { type: 'ephemeral' } },
      ],
      requestDigest: sha256(`${id}/${tail.join(',')}`),
    };
    write('api-request', record);
    this.base = record.id;
    this.sent += this.pending.length;
    this.pending = [];
  }
}

class Transcript {
  constructor(g, options) {
    Object.assign(this, options);
    this.g = g;
    this.rng = options.rng;
    this.last = options.last ?? null;
    this.backups = new Map();
    this.sinceCompact = 0;
    this.compactAt = this.rng.int(1.5 * MB, 3 * MB);
    this.pendingTask = undefined;
    if (g.requests) {
      // Every line goes through the recorder first, which writes its records ahead of a response's first line.
      const recorder = new RequestRecorder(this);
      const writer = this.writer;
      writer.writeJsonRaw = writer.writeJson.bind(writer);
      writer.writeJson = (kind, value) => {
        recorder.observe(kind, value);
        writer.writeJsonRaw(kind, value);
      };
    }
  }

  get bytes() {
    return this.writer.bytes;
  }

  tick(ms) {
    this.clock += Math.max(1, Math.round(ms));
    return new Date(this.clock).toISOString();
  }

  /** The envelope every conversation line starts with, in Claude Code's key order. */
  head(parent) {
    const env = {
      parentUuid: parent,
      isSidechain: this.agentId !== undefined,
      userType: 'external',
      cwd: this.project.cwd,
      sessionId: this.sessionId,
      version: this.version,
      gitBranch: this.gitBranch,
    };
    if (this.agentId !== undefined) env.agentId = this.agentId;
    if (this.slug) env.slug = this.slug;
    return env;
  }

  /** Writes a line that joins the uuid tree (under `parent`, by default the last line written). */
  chained(kind, body, { parent = this.last, dt = 3, tail } = {}) {
    const uuid = this.rng.uuid();
    const line = Object.assign(this.head(parent), body, { uuid, timestamp: this.tick(dt) }, tail);
    this.writer.writeJson(kind, line);
    this.last = uuid;
    return uuid;
  }

  hooks(event, commands, toolName, toolUseID) {
    for (const command of commands) {
      this.chained(
        'progress/hook_progress',
        {
          type: 'progress',
          data: {
            type: 'hook_progress',
            hookEvent: event,
            hookName: toolName ? `${event}:${toolName}` : event,
            command,
          },
          parentToolUseID: toolUseID,
          toolUseID,
        },
        { dt: this.rng.int(0, 4) },
      );
    }
  }

  /** File history tracks the files edited so far (bounded: old entries age out). */
  touch(path) {
    const version = (this.backups.get(path) ?? 0) + 1;
    this.backups.delete(path);
    this.backups.set(path, version);
    if (this.backups.size > 30) this.backups.delete(this.backups.keys().next().value);
  }

  snapshot(messageId, promptId, update) {
    const trackedFileBackups = {};
    for (const [path, version] of this.backups) {
      trackedFileBackups[path.slice(this.project.cwd.length + 1)] = {
        backupFileName: `${this.rng.hex(16)}@v${version}`,
        version,
        backupTime: new Date(this.clock).toISOString(),
      };
    }
    this.writer.writeJson('file-history-snapshot', {
      type: 'file-history-snapshot',
      messageId,
      snapshot: { messageId: promptId, trackedFileBackups, timestamp: new Date(this.clock).toISOString() },
      isSnapshotUpdate: update,
    });
  }

  usage(output) {
    const rng = this.rng;
    const created = rng.int(0, 12000);
    return {
      input_tokens: rng.int(1, 12),
      cache_creation_input_tokens: created,
      cache_read_input_tokens: rng.int(10000, 160000),
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: created },
      output_tokens: output,
      service_tier: 'standard',
      inference_geo: 'not_available',
    };
  }

  /** The Anthropic Messages API object of one content block of a response, with a usage snapshot. */
  apiMessage(response, block, outputTokens) {
    return {
      model: this.model,
      id: response.id,
      type: 'message',
      role: 'assistant',
      content: [block],
      stop_reason: null,
      stop_sequence: null,
      usage: this.usage(outputTokens),
    };
  }

  /** One line of an API response (Claude Code writes one per content block, all with the same message.id). */
  assistantLine(response, block, last, dt) {
    return this.chained(
      'assistant',
      {
        message: this.apiMessage(response, block, last ? response.output : response.early),
        requestId: response.requestId,
        type: 'assistant',
      },
      { dt },
    );
  }

  newResponse() {
    const rng = this.rng;
    return {
      id: `msg_01${rng.chars(B58, 22)}`,
      requestId: `req_011C${rng.chars(B58, 20)}`,
      early: rng.int(1, 12),
      output: rng.int(20, 3000),
    };
  }

  thinking() {
    const rng = this.rng;
    return {
      type: 'thinking',
      thinking: prose(rng, clamp(rng.logNormal(600, 0.9), 80, 12000)),
      signature: rng.chars(B64, rng.int(300, 1600)),
    };
  }

  // ---- tools ------------------------------------------------------------------------------------------

  resultSize() {
    // Median ~1 KB, p90 ~7 KB, p99 ~33 KB, capped at 200 KB: the fixture's tool results (user lines: median
    // 2.5 KB, p90 15 KB with the toolUseResult copy).
    return clamp(Math.round(this.rng.logNormal(1000, 1.5)), 100, 200_000);
  }

  /** Decides what a tool call asks for; `run` later produces what it returned. */
  planTool(name) {
    const rng = this.rng;
    const id = `toolu_01${rng.chars(B58, 22)}`;
    const file = rng.pick(this.project.files);
    // Now and then a line of 1–5 MB (the payload is written twice: content and toolUseResult): a whole log
    // cat'ed, a minified bundle read, a huge diff. About one per 40 MB of corpus.
    // The marathon session always has one, half-way through, so every corpus has at least one such line.
    const forced = this.hugeAt !== undefined && this.bytes >= this.hugeAt && !UNSIZED.has(name);
    if (forced) this.hugeAt = undefined;
    const huge = rng.chance(0.0005) || forced ? rng.int(0.5 * MB, 2.5 * MB) : 0;
    const size = huge || this.resultSize();
    switch (name) {
      case 'Bash': {
        const background = rng.chance(0.03);
        const input = {
          command: rng.pick([
            `mix test ${rng.pick(this.project.files)} 2>&1 | tail -${rng.int(20, 200)}`,
            'git status && git diff --stat',
            `npm test -- --run ${rng.pick(IDENTS)}`,
            `rg -n "${rng.pick(IDENTS)}" lib test | head -${rng.int(20, 200)}`,
            `ls -la ${rng.pick(DIRS)}`,
            `git log --oneline -${rng.int(5, 50)}`,
            `cat ${file}`,
            'mix compile --warnings-as-errors 2>&1',
          ]),
          description: sentence(rng).slice(0, 60),
        };
        if (background) input.run_in_background = true;
        else if (rng.chance(0.2)) input.timeout = rng.pick([30000, 120000, 300000, 600000]);
        return { name, id, input, size, background, long: !background && rng.chance(0.35) };
      }
      case 'Read': {
        const image = rng.chance(0.02);
        const input = { file_path: image ? file.replace(/\.\w+$/, '.png') : file };
        if (rng.chance(0.2)) Object.assign(input, { offset: rng.int(1, 400), limit: rng.int(50, 400) });
        return { name, id, input, size, image };
      }
      case 'Edit': {
        const original = code(rng, Math.max(size, 400));
        const at = rng.int(0, Math.max(0, original.length - 8));
        const oldLines = original.slice(at, at + rng.int(1, 8));
        const newLines = [...oldLines, ...code(rng, rng.int(40, 1500))];
        return {
          name,
          id,
          input: {
            replace_all: false,
            file_path: file,
            old_string: oldLines.join('\n'),
            new_string: newLines.join('\n'),
          },
          original,
          at,
          oldLines,
          newLines,
        };
      }
      case 'Write': {
        return { name, id, input: { file_path: file, content: code(rng, size).join('\n') } };
      }
      case 'Grep':
        return {
          name,
          id,
          input: { pattern: `${rng.pick(IDENTS)}|${rng.pick(IDENTS)}`, path: this.project.cwd, glob: '*.ex' },
          size,
        };
      case 'Glob':
        return { name, id, input: { pattern: `**/*${rng.pick(IDENTS)}*.${rng.pick(EXTS)}` } };
      case 'TodoWrite': {
        const todos = makePool(rng.int(2, 10), () => {
          const content = sentence(rng);
          return {
            content,
            status: rng.pick(['pending', 'in_progress', 'completed']),
            activeForm: content.slice(0, 40),
          };
        });
        return { name, id, input: { todos } };
      }
      case 'WebFetch':
        return {
          name,
          id,
          input: {
            url: `https://docs.example.com/${rng.pick(IDENTS)}/${rng.pick(IDENTS)}`,
            prompt: sentence(rng),
          },
          size,
        };
      case 'WebSearch':
        return {
          name,
          id,
          input: { query: `${rng.pick(IDENTS)} ${rng.pick(WORDS)} ${rng.pick(IDENTS)}` },
          size,
        };
      case 'Task':
        return {
          name,
          id,
          input: {
            description: sentence(rng).slice(0, 40),
            subagent_type: rng.pick(['general-purpose', 'Explore', 'claude-code-guide']),
            prompt: prose(rng, rng.int(200, 2000)),
          },
        };
      default:
        throw new Error(`unknown tool ${name}`);
    }
  }

  /** What the tool returned: `content` for the model, `toolUseResult` for the UI (a second copy, mostly). */
  runTool(call) {
    const rng = this.rng;
    const { input } = call;
    switch (call.name) {
      case 'Bash': {
        if (call.background) {
          const taskId = rng.hex(7);
          this.pendingTask = { taskId, description: input.description };
          const stdout = `Command running in background with ID: ${taskId}. Output is being written to: /tmp/claude-1000/${this.project.slug}/tasks/${taskId}.output`;
          return {
            content: stdout,
            result: {
              stdout,
              stderr: '',
              interrupted: false,
              isImage: false,
              noOutputExpected: false,
              backgroundTaskId: taskId,
            },
          };
        }
        const output = call.output ?? shell(rng, call.size);
        if (rng.chance(0.06)) {
          const text = `Exit code ${rng.pick([1, 1, 2, 128])}\n${output}`;
          return { content: text, result: `Error: ${text}`, isError: true };
        }
        return {
          content: output,
          result: { stdout: output, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
          isError: false,
        };
      }
      case 'Read': {
        if (call.image) {
          const data = rng.chars(B64, clamp(call.size * 4, 20_000, 400_000));
          return {
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }],
            result: {
              type: 'image',
              file: { base64: data, type: 'image/png', originalSize: Math.round(data.length * 0.75) },
            },
          };
        }
        const lines = code(rng, call.size);
        const first = input.offset ?? 1;
        return {
          content: numbered(lines, first),
          result: {
            type: 'text',
            file: {
              filePath: input.file_path,
              content: lines.join('\n'),
              numLines: lines.length,
              startLine: first,
              totalLines: first + lines.length + rng.int(0, 300),
            },
          },
        };
      }
      case 'Edit': {
        const snippet = rng.chance(0.5);
        const start = Math.max(0, call.at - 4);
        const content = snippet
          ? `The file ${input.file_path} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${numbered(call.newLines.concat(call.original.slice(call.at + call.oldLines.length, call.at + call.oldLines.length + 6)), start + 1)}`
          : `The file ${input.file_path} has been updated successfully.`;
        this.touch(input.file_path);
        return {
          content,
          result: {
            filePath: input.file_path,
            oldString: input.old_string,
            newString: input.new_string,
            originalFile: call.original.join('\n'),
            structuredPatch: [
              {
                oldStart: call.at + 1,
                oldLines: call.oldLines.length,
                newStart: call.at + 1,
                newLines: call.newLines.length,
                lines: [...call.oldLines.map((l) => `-${l}`), ...call.newLines.map((l) => `+${l}`)],
              },
            ],
            userModified: false,
            replaceAll: false,
          },
        };
      }
      case 'Write': {
        this.touch(input.file_path);
        return {
          content: `File created successfully at: ${input.file_path}`,
          result: {
            type: 'create',
            filePath: input.file_path,
            content: input.content,
            structuredPatch: [],
            originalFile: null,
          },
        };
      }
      case 'Grep': {
        if (rng.chance(0.2)) {
          return {
            content: 'No files found',
            result: { mode: 'files_with_matches', filenames: [], numFiles: 0 },
          };
        }
        const lines = code(rng, call.size).map(
          (line, i) => `${rng.pick(this.project.files)}:${i + 1}:${line.trim()}`,
        );
        const filenames = [...new Set(lines.slice(0, 40).map((l) => l.split(':')[0]))];
        return {
          content: lines.join('\n'),
          result: {
            mode: 'content',
            numFiles: filenames.length,
            filenames,
            content: lines.join('\n'),
            numLines: lines.length,
          },
        };
      }
      case 'Glob': {
        const filenames = makePool(rng.int(0, 60), () => rng.pick(this.project.files));
        return {
          content: filenames.length ? filenames.join('\n') : 'No files found',
          result: { filenames, durationMs: rng.int(5, 900), numFiles: filenames.length, truncated: false },
        };
      }
      case 'TodoWrite':
        return {
          content:
            'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable',
          result: { oldTodos: [], newTodos: input.todos },
        };
      case 'WebFetch': {
        const text = prose(rng, call.size);
        return {
          content: text,
          result: {
            bytes: text.length * rng.int(3, 20),
            code: 200,
            codeText: 'OK',
            result: text,
            durationMs: rng.int(300, 9000),
            url: input.url,
          },
        };
      }
      case 'WebSearch': {
        const links = makePool(10, () => ({
          title: sentence(rng),
          url: `https://${rng.pick(IDENTS)}.example.org/${rng.pick(IDENTS)}/${rng.hex(6)}`,
        }));
        const summary = prose(rng, call.size);
        return {
          content: `Web search results for query: "${input.query}"\n\nLinks: ${JSON.stringify(links)}\n\n${summary}`,
          result: {
            query: input.query,
            results: [{ tool_use_id: `srvtoolu_01${rng.chars(B58, 22)}`, content: links }, summary],
            durationSeconds: rng.next() * 10,
          },
        };
      }
      default:
        throw new Error(`no runner for ${call.name}`);
    }
  }

  /** Bash streaming: one progress line a second, `fullOutput` growing with the output (Claude Code caps it). */
  bashProgress(call) {
    const rng = this.rng;
    const output = shell(rng, call.size);
    call.output = output;
    const seconds = clamp(Math.round(rng.logNormal(8, 1)), 2, 240);
    const steps = Math.min(seconds - 1, 150);
    for (let i = 1; i <= steps; i++) {
      const end = Math.round((output.length * i) / steps);
      const full = output.slice(Math.max(0, end - 30000), end);
      this.chained(
        'progress/bash_progress',
        {
          type: 'progress',
          data: {
            type: 'bash_progress',
            output: full.slice(-rng.int(0, 200)),
            fullOutput: full,
            elapsedTimeSeconds: i + 1,
            totalLines: full.split('\n').length,
            timeoutMs: call.input.timeout ?? 120000,
          },
          toolUseID: `bash-progress-${i - 1}`,
          parentToolUseID: call.id,
        },
        { dt: rng.int(900, 1400) },
      );
    }
  }

  /** A sub-agent (Task): its own file under <session>/subagents/, mirrored into this file as agent_progress. */
  runTask(call, response) {
    const g = this.g;
    const rng = this.rng;
    const agentId = `a${rng.hex(6)}`;
    const path = join(this.dir, this.sessionId, 'subagents', `agent-${agentId}.jsonl`);
    const mirror = rng.chance(0.85);
    const sub = new Transcript(g, {
      rng: rng.fork(agentId),
      writer: new JsonlWriter(path, g.stats),
      dir: this.dir,
      project: this.project,
      sessionId: this.sessionId,
      agentId,
      version: this.version,
      gitBranch: this.gitBranch,
      slug: this.slug,
      model: rng.pick(['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001', this.model]),
      clock: this.clock,
      hookConfig: { ...this.project.hooks, pre: [], sessionStart: [], stop: [] },
      tools: SUB_TOOLS,
      onMirror: mirror
        ? (inner) => {
            g.stats.mirroredToolUses += inner.toolUses;
            // The mirror is written as the sub-agent line lands: keep this file's clock in step.
            this.clock = Math.max(this.clock, sub.clock);
            this.chained(
              'progress/agent_progress',
              {
                type: 'progress',
                data: {
                  message: inner.message,
                  normalizedMessages: [],
                  type: 'agent_progress',
                  prompt: call.input.prompt,
                  agentId,
                },
                toolUseID: `agent_msg_${response.id.slice(4)}`,
                parentToolUseID: call.id,
              },
              { dt: 1 },
            );
          }
        : undefined,
    });
    if (mirror) g.stats.mirroredAgents++;
    g.stats.sessions.subagent++;
    const target = clamp(rng.logNormal(60_000, 1.2), 4000, 3 * MB);
    const report = sub.runAgent(call.input.prompt, target);
    sub.writer.close(sub.clock);
    if (rng.chance(0.3)) {
      // Newer builds write a sidecar naming the call that started the sub-agent.
      writeFileSync(
        path.replace(/\.jsonl$/, '.meta.json'),
        JSON.stringify({
          agentType: call.input.subagent_type,
          description: call.input.description,
          toolUseId: call.id,
        }),
      );
      g.stats.sidecars++;
    }
    const duration = sub.clock - this.clock;
    this.clock = Math.max(this.clock, sub.clock);
    const usage = this.usage(rng.int(200, 4000));
    const tokens = rng.int(5000, 120000);
    return {
      content: [
        { type: 'text', text: report },
        {
          type: 'text',
          text: `agentId: ${agentId} (for resuming to continue this agent's work if needed)\n<usage>total_tokens: ${tokens}\ntool_uses: ${sub.toolCount ?? 0}\nduration_ms: ${duration}</usage>`,
        },
      ],
      result: {
        status: 'completed',
        prompt: call.input.prompt,
        agentId,
        content: [{ type: 'text', text: report }],
        totalDurationMs: duration,
        totalTokens: tokens,
        totalToolUseCount: sub.toolCount ?? 0,
        usage,
      },
    };
  }

  /** Writes one tool's result line, under the assistant line that made the call (not under the last line). */
  toolResult(call, callLine, response) {
    const rng = this.rng;
    if (call.name === 'Bash' && call.long) this.bashProgress(call);
    const out = call.name === 'Task' ? this.runTask(call, response) : this.runTool(call);
    const post = this.hookConfig.post.concat(
      call.name === 'Edit' || call.name === 'Write' ? this.hookConfig.postEdit : [],
    );
    this.hooks('PostToolUse', post, call.name, call.id);
    let content = out.content;
    // Some tools (MCP, Task) answer with a block list instead of a string.
    if (typeof content === 'string' && rng.chance(0.08)) content = [{ type: 'text', text: content }];
    const block = { tool_use_id: call.id, type: 'tool_result', content };
    if (call.name === 'Bash' || out.isError) block.is_error = out.isError === true;
    const message = { role: 'user', content: [block] };
    const uuid = this.chained(
      'user',
      { type: 'user', message },
      {
        parent: callLine,
        dt: call.name === 'Task' ? 5 : rng.logNormal(400, 1.2),
        tail:
          out.result === undefined
            ? undefined
            : { toolUseResult: out.result, sourceToolAssistantUUID: callLine },
      },
    );
    this.onMirror?.({
      message: { type: 'user', message, uuid, timestamp: new Date(this.clock).toISOString() },
      toolUses: 0,
    });
    if ((call.name === 'Edit' || call.name === 'Write') && this.agentId === undefined && this.promptId) {
      this.snapshot(callLine, this.promptId, true);
    }
    return uuid;
  }

  /**
   * One API response: optional empty text, thinking, text, then tool calls (each with its PreToolUse hooks),
   * then the calls' results. Returns false when the user interrupted.
   */
  step(final, first) {
    const rng = this.rng;
    const response = this.newResponse();
    const blocks = [];
    if (rng.chance(0.45)) blocks.push({ type: 'text', text: '\n\n' });
    if (rng.chance(first ? 0.5 : 0.12)) blocks.push(this.thinking());
    if (final || rng.chance(0.45)) {
      blocks.push({ type: 'text', text: prose(rng, clamp(rng.logNormal(final ? 900 : 160, 1), 20, 20000)) });
    }
    const n = final ? 0 : rng.chance(0.8) ? 1 : rng.int(2, 5);
    const calls = [];
    for (let i = 0; i < n; i++) calls.push(this.planTool(rng.weighted(this.tools)));
    if (blocks.length === 0 && calls.length === 0) blocks.push({ type: 'text', text: 'Done.' });

    const total = blocks.length + calls.length;
    blocks.forEach((block, i) => {
      this.assistantLine(response, block, i === total - 1, i === 0 ? rng.logNormal(2500, 0.8) : 500);
    });
    const lines = [];
    calls.forEach((call, i) => {
      const block = { type: 'tool_use', id: call.id, name: call.name, input: call.input };
      if (!this.agentId) block.caller = { type: 'direct' };
      const uuid = this.assistantLine(
        response,
        block,
        blocks.length + i === total - 1,
        rng.logNormal(700, 0.7),
      );
      lines.push(uuid);
      this.onMirror?.({
        message: {
          type: 'assistant',
          timestamp: new Date(this.clock).toISOString(),
          message: this.apiMessage(response, block, response.early),
          requestId: response.requestId,
          uuid,
        },
        toolUses: 1,
      });
      if (this.hookConfig.preTools.has(call.name))
        this.hooks('PreToolUse', this.hookConfig.pre, call.name, call.id);
    });
    this.toolCount = (this.toolCount ?? 0) + calls.length;
    this.g.stats.toolUses += calls.length;
    for (const [i, call] of calls.entries()) {
      this.toolResult(call, lines[i], response);
      if (this.agentId === undefined && rng.chance(0.006)) {
        this.chained('user', {
          type: 'user',
          message: {
            role: 'user',
            content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }],
          },
        });
        return false;
      }
    }
    return true;
  }

  /** A user turn: prompt (or slash command), API responses with tools until a final answer, Stop hooks. */
  turn() {
    const rng = this.rng;
    const hooks = this.hookConfig;
    this.promptId = rng.uuid();
    if (this.pendingTask && rng.chance(0.6)) {
      const { taskId, description } = this.pendingTask;
      this.pendingTask = undefined;
      const content = `<task-notification>\n<task-id>${taskId}</task-id>\n<output-file>/tmp/claude-1000/${this.project.slug}/tasks/${taskId}.output</output-file>\n<status>completed</status>\n<summary>Background command "${description}" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result.`;
      this.queue('enqueue', content);
      this.queue('remove');
      this.chained(
        'user',
        { type: 'user', message: { role: 'user', content } },
        { dt: rng.logNormal(30000, 1) },
      );
    } else if (rng.chance(0.05)) {
      this.slashCommand();
      return;
    } else {
      this.snapshot(this.promptId, this.promptId, false);
      const text = prose(rng, clamp(rng.logNormal(300, 1.1), 15, 30000));
      const content = rng.chance(0.1)
        ? [
            {
              type: 'text',
              text: `<ide_selection>The user selected the lines ${rng.int(1, 90)} to ${rng.int(91, 200)} from ${rng.pick(this.project.files)}:\n${code(rng, rng.int(100, 2000)).join('\n')}</ide_selection>`,
            },
            { type: 'text', text },
          ]
        : text;
      this.writer.writeJson(
        'user',
        Object.assign(this.head(this.last), {
          type: 'user',
          message: { role: 'user', content },
          uuid: this.promptId,
          timestamp: this.tick(rng.logNormal(60000, 1.5)),
          thinkingMetadata: { maxThinkingTokens: 31999 },
          todos: [],
          permissionMode: rng.pick(['default', 'acceptEdits', 'bypassPermissions']),
        }),
      );
      this.last = this.promptId;
    }
    const steps = clamp(Math.round(rng.logNormal(6, 0.9)), 1, 120);
    for (let s = 0; s < steps; s++) {
      const final = s === steps - 1 || this.bytes >= this.target;
      if (!this.step(final, s === 0)) return;
      if (final) break;
    }
    if (hooks.stop.length > 0) {
      const toolUseID = rng.uuid();
      this.hooks('Stop', hooks.stop, undefined, toolUseID);
      this.chained(
        'system',
        {
          type: 'system',
          subtype: 'stop_hook_summary',
          hookCount: hooks.stop.length,
          hookInfos: hooks.stop.map((command) => ({ command })),
          hookErrors: [],
          preventedContinuation: false,
          stopReason: '',
          hasOutput: true,
          level: 'suggestion',
        },
        { dt: rng.int(20, 300), tail: { toolUseID } },
      );
    }
    if (rng.chance(0.3)) {
      this.chained(
        'system',
        { type: 'system', subtype: 'turn_duration', durationMs: rng.int(3000, 3_000_000) },
        { tail: { isMeta: false } },
      );
    }
    if (this.pendingTask && rng.chance(0.3))
      this.queue('enqueue', `<task-notification>${this.pendingTask.taskId}`);
  }

  queue(operation, content) {
    const line = { type: 'queue-operation', operation, timestamp: this.tick(5), sessionId: this.sessionId };
    if (content !== undefined) line.content = content;
    this.writer.writeJson('queue-operation', line);
  }

  /** `/mcp`, `/model` and friends: a caveat, the command, its stdout, and system/local_command lines. */
  slashCommand() {
    const rng = this.rng;
    const name = rng.pick(['mcp', 'model', 'context', 'cost', 'clear', 'permissions']);
    this.snapshot(this.promptId, this.promptId, false);
    const user = (content, meta) =>
      this.chained(
        'user',
        Object.assign({ type: 'user', message: { role: 'user', content } }, meta ? { isMeta: true } : {}),
        { dt: 1 },
      );
    user(
      '<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>',
      true,
    );
    user(
      `<command-name>/${name}</command-name>\n            <command-message>${name}</command-message>\n            <command-args></command-args>`,
    );
    user(`<local-command-stdout>${shell(rng, rng.int(40, 1500))}</local-command-stdout>`);
    for (let i = rng.int(1, 2); i > 0; i--) {
      this.chained(
        'system',
        {
          type: 'system',
          subtype: 'local_command',
          content: `<command-name>/${name}</command-name>\n            <command-message>${name}</command-message>\n            <command-args></command-args>`,
          level: 'info',
        },
        { dt: rng.int(100, 5000), tail: { isMeta: false } },
      );
    }
  }

  /**
   * Auto-compaction: the summary is written by an `acompact-*` side call (its own sub-agent file), then the
   * main chain restarts at a compact_boundary (parentUuid null, logicalParentUuid = the last line before it).
   */
  compact() {
    const g = this.g;
    const rng = this.rng;
    const before = this.last;
    const agentId = `acompact-${rng.hex(6)}`;
    const side = new Transcript(g, {
      rng: rng.fork(agentId),
      writer: new JsonlWriter(join(this.dir, this.sessionId, 'subagents', `agent-${agentId}.jsonl`), g.stats),
      dir: this.dir,
      project: this.project,
      sessionId: this.sessionId,
      agentId,
      version: this.version,
      gitBranch: this.gitBranch,
      slug: this.slug,
      model: this.model,
      clock: this.clock,
      last: before,
    });
    g.stats.sessions.compaction++;
    g.stats.compactions++;
    for (let i = rng.int(0, 2); i > 0; i--) {
      side.chained(
        'user',
        {
          type: 'user',
          message: {
            role: 'user',
            content: `<system-reminder>\nPostToolUse:Edit hook additional context: ${prose(rng, rng.int(200, 1800))}\n</system-reminder>`,
          },
          isMeta: true,
        },
        { parent: before },
      );
    }
    side.chained(
      'user',
      {
        type: 'user',
        message: {
          role: 'user',
          content: `Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.\n${prose(rng, 8000)}`,
        },
      },
      { parent: before },
    );
    const summary = prose(rng, clamp(rng.logNormal(12000, 0.4), 3000, 40000));
    const response = side.newResponse();
    side.assistantLine(response, { type: 'text', text: `<analysis>\n${summary}\n</summary>` }, true, 60000);
    side.writer.close(side.clock);
    this.clock = side.clock;

    const boundary = rng.uuid();
    const head = this.head(null);
    this.writer.writeJson(
      'system/compact_boundary',
      Object.assign({ parentUuid: null, logicalParentUuid: before }, head, {
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        isMeta: false,
        timestamp: this.tick(10),
        uuid: boundary,
        level: 'info',
        compactMetadata: {
          trigger: rng.chance(0.85) ? 'auto' : 'manual',
          preTokens: rng.int(150000, 175000),
        },
      }),
    );
    this.last = boundary;
    this.chained(
      'user',
      {
        type: 'user',
        message: {
          role: 'user',
          content: `This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n${summary}`,
        },
        isVisibleInTranscriptOnly: true,
        isCompactSummary: true,
      },
      { dt: 0 },
    );
    this.hooks('SessionStart', this.hookConfig.sessionStart, 'compact', rng.uuid());
  }

  /** The main transcript of a session, until it reaches about `target` bytes. */
  runMain(target) {
    const rng = this.rng;
    this.target = target;
    this.promptId = rng.uuid();
    this.snapshot(this.promptId, this.promptId, false);
    this.hooks('SessionStart', this.hookConfig.sessionStart, 'startup', rng.uuid());
    let turns = 0;
    let mark = this.bytes;
    while (this.bytes < target) {
      this.turn();
      turns++;
      // Claude Code adds the plan slug to every line once it has one.
      if (turns === 1 && rng.chance(0.7)) {
        this.slug = `${rng.pick(WORDS)}-${rng.pick(IDENTS)}-${rng.pick(['thompson', 'barto', 'lovelace', 'hopper'])}`;
      }
      this.sinceCompact += this.bytes - mark;
      mark = this.bytes;
      if (this.sinceCompact > this.compactAt && this.bytes < target) {
        this.compact();
        this.sinceCompact = 0;
        this.compactAt = rng.int(1.5 * MB, 3 * MB);
      }
    }
  }

  /** A sub-agent transcript: the Task prompt, then responses with tools, then the report. */
  runAgent(prompt, target) {
    const rng = this.rng;
    this.target = target;
    const message = { role: 'user', content: prompt };
    const uuid = this.chained('user', { type: 'user', message }, { parent: null, dt: 5 });
    this.onMirror?.({
      message: {
        type: 'user',
        message: { role: 'user', content: [{ type: 'text', text: prompt }] },
        uuid,
        timestamp: new Date(this.clock).toISOString(),
      },
      toolUses: 0,
    });
    for (let s = 0; this.bytes < target && s < 400; s++) this.step(false, s === 0);
    const report = prose(rng, clamp(rng.logNormal(2500, 0.8), 200, 30000));
    this.assistantLine(this.newResponse(), { type: 'text', text: report }, true, rng.logNormal(4000, 0.7));
    return report;
  }
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Writes a corpus of about `megabytes` MB (10^6 bytes, transcripts only) under `<dir>/projects/<slug>/`.
 * The same (megabytes, seed) always gives the same bytes.
 */
export function generate({ dir, megabytes, seed = 1, requests = false }) {
  if (!dir) throw new Error('generate: dir is required');
  const root = resolve(dir);
  const rng = new Rng(`corpus/${seed}`);
  const stats = new Stats();
  const g = { stats, requests };
  const targetBytes = megabytes * MB;
  const projects = makePool(4 + Math.ceil(megabytes / 10), () => undefined).map((_, i) =>
    makeProject(rng.fork(`project${i}`), i),
  );
  // Zipf-like: a few projects hold most sessions.
  const projectWeights = projects.map((p, i) => [1 / (i + 1), p]);
  // One long-running "marathon" session of a fixed size in every corpus, so the largest file (which bounds the
  // per-file memory of the ingest) is the same at every corpus size; the rest is heavy-tailed, a few KB to
  // 16 MB. (20 MB from a 50 MB corpus up; smaller corpora get 40% of their size.)
  const marathon = Math.min(20 * MB, 0.4 * targetBytes);
  const start = Date.parse('2026-01-05T08:00:00.000Z');
  let index = 0;
  while (stats.bytes < targetBytes) {
    const srng = rng.fork(`session${index}`);
    const project = srng.weighted(projectWeights);
    const remaining = targetBytes - stats.bytes;
    const wanted = index === 0 ? marathon : clamp(srng.logNormal(250_000, 1.7), 3000, 16 * MB);
    const target = Math.max(3000, Math.min(wanted, remaining));
    const sessionId = srng.uuid();
    const dir = join(root, 'projects', project.slug);
    const transcript = new Transcript(g, {
      rng: srng,
      writer: new JsonlWriter(join(dir, `${sessionId}.jsonl`), stats),
      dir,
      project,
      sessionId,
      version: srng.weighted(VERSIONS),
      gitBranch: srng.pick(project.branches),
      model: srng.weighted(MODELS),
      clock: start + Math.floor(srng.next() * 60 * 86_400_000),
      tools: MAIN_TOOLS,
      hookConfig: project.hooks,
    });
    stats.sessions.main++;
    if (index === 0) transcript.hugeAt = target / 2;
    transcript.runMain(target);
    transcript.writer.close(transcript.clock);
    index++;
  }
  return {
    files: stats.files,
    bytes: stats.bytes,
    lines: stats.lines,
    largestFile: stats.largestFile,
    sidecars: stats.sidecars,
    projects: projects.length,
    sessions: stats.sessions,
    toolUses: stats.toolUses,
    mirroredAgents: stats.mirroredAgents,
    mirroredToolUses: stats.mirroredToolUses,
    compactions: stats.compactions,
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
      requests: { type: 'boolean', default: false },
    },
  });
  if (!values.dir) {
    process.stderr.write(
      'usage: node bench/ingest/generate.mjs --dir DIR [--megabytes 50] [--seed 1] [--requests]\n',
    );
    process.exit(2);
  }
  const started = performance.now();
  const result = generate({
    dir: values.dir,
    megabytes: Number(values.megabytes),
    seed: values.seed,
    requests: values.requests,
  });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
