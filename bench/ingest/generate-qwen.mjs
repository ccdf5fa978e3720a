#!/usr/bin/env node
// Deterministic generator of a large, realistic Qwen Code 0.24.4 corpus for the ingest benchmark.
//
// Modelled on the real 0.24.4 session in test/fixtures/real/qwen-code-0.24.4/home/.qwen/projects/ (see
// src/sources/qwen/README.md): `<root>/.qwen/projects/<cwd slug>/chats/<sessionId>.jsonl`, one file per session,
// every record `{uuid, parentUuid, sessionId, timestamp, type, provenance, cwd, version, gitBranch, …}` chained by
// parentUuid (each record's parent is the one before it). Per prompt a `user` record (`real_user`) and a
// `system/attribution_snapshot`; per model request a `system/ui_telemetry` `qwen-code.api_response` (tokens,
// duration, the response text), then the `assistant` record (`message.role: model`, parts: a thought, text,
// `functionCall`s, usageMetadata); per call a `ui_telemetry` `qwen-code.tool_call` and then one `tool_result` record
// each (`functionResponse`, `toolCallResult` with its resultDisplay: a shell's structured result, diffs with the
// whole original and new file for edits; errors as `response.error` with status `error`); an attribution snapshot
// after edits. About half of the records are telemetry, as in the real file. Side requests: the managed memory
// extractor after 30 % of the answers (an api_response with `subagent_name`). Compressions every 1.5–3 MB of
// history, before a request in the middle of a turn (as in the real file): the summarizer's api_response, then a
// `system/chat_compression` whose `compressedHistory` holds the summary, the fixed acknowledgement, a user entry
// re-embedding recently read files and the turn's recent model entries and results (copies of earlier records).
//
// Module: `generate({ dir, megabytes, seed })` → { files, bytes, lines, largestFile, sessions, messages,
// toolUses, … } (1 MB = 10^6 bytes). `messages` is what the store must hold: one per prompt, model record and
// tool result, and three per compression (the summary, the acknowledgement, the re-embedded files; the kept
// entries copy earlier messages).
// CLI:    node bench/ingest/generate-qwen.mjs --dir /tmp/corpus --megabytes 50 [--seed 1]

import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JsonlWriter } from './jsonl-writer.mjs';
import { HEX, Rng } from './random.mjs';

const MB = 1e6;
const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, Math.round(v)));
const iso = (ms) => new Date(ms).toISOString();

// ---------------------------------------------------------------------------------------------------------
// Text pools, built once from a fixed seed.

const poolRng = new Rng('qwen-text-pools-v1');
const WORDS = (
  'the a to of and in is it that for on with this we be as not are can file test session message tool ' +
  'function module call result error value return data state user model output input line path check ' +
  'update add remove fix build run config handle parse read write store query index schema migration ' +
  'render view component event handler request response server client cache token stream buffer chunk ' +
  'should would could need want will now then also just only first next last each every all some any ' +
  'implement refactor rename move split merge extract inline review plan approach issue bug feature'
).split(' ');
const IDENTS = 'cart order item total tax price sku user session store repo client queue job ctx row'.split(
  ' ',
);
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
      () => `def ${id()}_${id()}(${id()}, ${id()}=None):`,
      () => `export function ${id()}(${id()}: ${id()}[]): number {`,
      () => `const ${id()} = await ${id()}.${id()}(${id()}, { ${id()}: ${poolRng.int(0, 999)} });`,
      () =>
        `if (${id()}.length > ${poolRng.int(1, 64)}) return "${poolRng.pick(WORDS)}\\t${poolRng.pick(WORDS)}";`,
      () => `# ${sentence(poolRng)}`,
      () => `// ${sentence(poolRng)}`,
      () => '}',
      () => '',
    ])()
  );
});
const SHELL = makePool(2000, () =>
  poolRng.pick([
    () => ` ✓ test/${poolRng.pick(IDENTS)}.test.ts (${poolRng.int(1, 40)} tests) ${poolRng.int(2, 900)}ms`,
    () => `src/${poolRng.pick(IDENTS)}.py:${poolRng.int(1, 400)}:${poolRng.int(1, 80)}: ${sentence(poolRng)}`,
    () =>
      `-rw-r--r--  1 ada ada ${poolRng.int(100, 99999)} Dec ${poolRng.int(1, 28)} ${poolRng.pick(IDENTS)}.py`,
    () => `${poolRng.chars(HEX, 7)} ${sentence(poolRng)}`,
    () => `${poolRng.int(10, 999)} passed, ${poolRng.int(0, 3)} failed`,
    () => '',
  ])(),
);

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

// ---------------------------------------------------------------------------------------------------------

class Stats {
  constructor() {
    this.mix = {};
    this.files = 0;
    this.bytes = 0;
    this.lines = 0;
    this.largestFile = 0;
    this.sessions = { main: 0 };
    this.messages = 0;
    this.toolUses = 0;
    this.compressions = 0;
    this.sideCalls = 0;
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

const ACK = 'Got it. Thanks for the additional context!';
const VERSION = '0.24.4';
const MODELS = [
  [6, 'qwen3-coder-plus'],
  [2, 'qwen3-coder-flash'],
  [1, 'qwen3.6-max'],
];
const TOOLS = [
  [24, 'read_file'],
  [22, 'run_shell_command'],
  [12, 'edit'],
  [10, 'grep_search'],
  [8, 'glob'],
  [5, 'write_file'],
  [4, 'read_many_files'],
  [3, 'todo_write'],
  [2, 'web_fetch'],
  [2, 'list_directory'],
  [1, 'save_memory'],
];
const B36 = '0123456789abcdefghijklmnopqrstuvwxyz';

function makeProject(rng, index) {
  const name = `${rng.pick(['shop', 'billing', 'api', 'web', 'infra', 'docs'])}-${index}`;
  const cwd = `/home/ada/projects/${name}`;
  const files = Array.from(
    { length: rng.int(6, 40) },
    () => `${rng.pick(['src', 'lib', 'test', 'scripts'])}/${rng.pick(IDENTS)}_${rng.pick(IDENTS)}.ts`,
  );
  return {
    cwd,
    slug: cwd.replace(/\//g, '-'),
    files: [...new Set(files)],
    branch: rng.pick(['main', 'master', 'dev']),
  };
}

// ---------------------------------------------------------------------------------------------------------

class Session {
  constructor(g, { rng, id, project, clock, writer }) {
    Object.assign(this, { g, rng, id, project, clock, writer });
    this.model = rng.weighted(MODELS);
    this.parent = null;
    this.requests = 0;
    this.prompts = 0;
    this.callPrefix = rng.chars(B36, 8);
    this.input = 19_800;
    this.historyBytes = 0;
    this.compressAt = rng.int(1_500_000, 3_000_000);
    /** The model entries and results of the current turn, as a compressed history copies them. */
    this.turnEntries = [];
    this.readFiles = [];
    this.fileStates = {};
  }
  tick(lo = 2, hi = 300) {
    this.clock += this.rng.int(lo, hi);
    return iso(this.clock);
  }
  record(kind, type, provenance, fields, lo, hi) {
    const uuid = this.rng.uuid();
    const value = {
      uuid,
      parentUuid: this.parent,
      sessionId: this.id,
      timestamp: this.tick(lo, hi),
      type,
      provenance,
      cwd: this.project.cwd,
      version: VERSION,
      gitBranch: this.project.branch,
      ...fields,
    };
    this.writer.writeJson(kind, value);
    this.parent = uuid;
    return value;
  }
  system(subtype, systemPayload, lo, hi, kind = `system/${subtype}`) {
    return this.record(kind, 'system', 'system', { subtype, systemPayload }, lo, hi);
  }
  attribution() {
    this.system('attribution_snapshot', {
      snapshot: {
        type: 'attribution-snapshot',
        version: 1,
        surface: 'cli',
        fileStates: this.fileStates,
        promptCount: this.prompts,
        promptCountAtLastCommit: 0,
      },
    });
  }
  promptId() {
    return `${this.id}########${this.prompts - 1}`;
  }
  apiResponse(
    kind,
    { output, text, thoughts = 0, promptId = this.promptId(), extra = {}, input = this.input },
  ) {
    const cached = this.rng.chance(0.6) ? Math.floor(input * this.rng.next() * 0.9) : 0;
    const duration = this.rng.int(300, 20_000);
    this.system(
      'ui_telemetry',
      {
        uiEvent: {
          'event.name': 'qwen-code.api_response',
          'event.timestamp': iso(this.clock + duration),
          response_id: `chatcmpl-${this.rng.chars(B36, 12)}`,
          model: this.model,
          status_code: 200,
          duration_ms: duration,
          input_token_count: input,
          output_token_count: output,
          cached_content_token_count: cached,
          thoughts_token_count: thoughts,
          total_token_count: input + output,
          response_text: text.slice(0, 2_000),
          prompt_id: promptId,
          auth_type: 'openai',
          ttft_ms: this.rng.int(200, duration),
          ...extra,
        },
      },
      duration,
      duration + 50,
      kind,
    );
    return { input, cached };
  }

  prompt(text) {
    this.prompts++;
    this.record(
      'user',
      'user',
      'real_user',
      { message: { role: 'user', parts: [{ text }] } },
      3_000,
      180_000,
    );
    this.g.stats.messages++;
    this.historyBytes += text.length;
    this.attribution();
    this.turnEntries = [];
  }

  /** What a call does: its args, the output the model gets and what the UI shows (resultDisplay). */
  tool(name) {
    const rng = this.rng;
    const rel = rng.pick(this.project.files);
    const path = `${this.project.cwd}/${rel}`;
    const size = clamp(rng.logNormal(900, 1.5), 20, 120_000);
    switch (name) {
      case 'read_file': {
        if (!this.readFiles.includes(path)) this.readFiles.push(path);
        return { args: { file_path: path }, output: fill(rng, CODE, size), display: '' };
      }
      case 'run_shell_command': {
        const command = `${rng.pick(['npm test', 'git status', 'ls -la', 'npx tsc --noEmit', 'npm run lint'])} ${rng.pick(IDENTS)}`;
        const full = fill(rng, SHELL, size);
        const code = rng.chance(0.15) ? rng.int(1, 2) : 0;
        // A long output reaches the model truncated, with a pointer to the whole of it.
        const truncated = full.length > 30_000;
        const shown = truncated
          ? `${full.slice(0, 4_000)}\n... [${full.length - 8_000} characters truncated; the full output is in /home/ada/.qwen/tmp/${rng.hex(16)}/shell_${rng.hex(8)}.output] ...\n${full.slice(-4_000)}`
          : full;
        const text = `Command: ${command}\nDirectory: (root)\nOutput: ${shown}\nError: (none)\nExit Code: ${code}\nSignal: (none)\nProcess Group PGID: (none)`;
        return {
          args: { command, description: sentence(rng).slice(0, 80) },
          output: text,
          error: code !== 0,
          display: {
            type: 'shell_result',
            version: 1,
            directory: this.project.cwd,
            exitCode: code,
            signal: null,
            pid: null,
            outcome: code ? 'failed' : 'completed',
            outputFiles: [],
            output: full,
            text,
            error: null,
            notices: [],
            truncated,
          },
        };
      }
      case 'edit':
      case 'write_file': {
        const original =
          name === 'write_file' && rng.chance(0.5)
            ? ''
            : fill(rng, CODE, clamp(rng.logNormal(3_000, 1.1), 100, 60_000));
        const lines = original.split('\n');
        const at = rng.int(0, Math.max(0, lines.length - 1));
        const oldString = lines.slice(at, at + rng.int(1, 6)).join('\n');
        const newString = fill(rng, CODE, clamp(rng.logNormal(200, 1), 10, 4_000));
        const updated = name === 'write_file' ? newString : original.replace(oldString, newString);
        const file = rel.split('/').pop();
        this.fileStates[path] = {
          aiContribution: newString.length,
          aiCreated: original === '',
          contentHash: rng.hex(64),
        };
        this.edited = true;
        const args =
          name === 'edit'
            ? { file_path: path, old_string: oldString, new_string: newString }
            : { file_path: path, content: updated };
        const diffStat = {
          model_added_lines: rng.int(1, 40),
          model_removed_lines: rng.int(0, 20),
          model_added_chars: newString.length,
          model_removed_chars: oldString.length,
          user_added_lines: 0,
          user_removed_lines: 0,
          user_added_chars: 0,
          user_removed_chars: 0,
        };
        return {
          args,
          output: `The file: ${path} has been updated. Showing lines 1-${lines.length} of ${lines.length} from the edited file:\n\n---\n\n${updated.slice(0, 8_000)}`,
          display: {
            fileDiff: `Index: ${file}\n===================================================================\n--- ${file}\tCurrent\n+++ ${file}\tProposed\n@@ -1,6 +1,6 @@\n-${oldString.split('\n').join('\n-')}\n+${newString.split('\n').join('\n+')}\n`,
            fileName: file,
            filePath: path,
            originalContent: original,
            newContent: updated,
            diffStat,
          },
          metadata: diffStat,
        };
      }
      case 'grep_search': {
        const pattern = rng.pick(IDENTS);
        return {
          args: { pattern },
          output: `Found ${rng.int(1, 60)} matches for pattern "${pattern}" in the workspace directory:\n---\n${fill(rng, CODE, size)}\n---`,
          display: `Found ${rng.int(1, 60)} matches`,
        };
      }
      case 'glob': {
        const listing = this.project.files.map((f) => `${this.project.cwd}/${f}`).join('\n');
        return {
          args: { pattern: '**/*' },
          output: `Found ${this.project.files.length} file(s) matching "**/*" in the workspace directory, sorted by modification time (newest first):\n---\n${listing}`,
          display: `Found ${this.project.files.length} matching file(s)`,
        };
      }
      case 'list_directory': {
        const text =
          'Tool "list_directory" is a built-in tool that is disabled by default because glob covers directory listing in most cases. Enable it with the tools.listDirectory.enabled setting. Use glob instead.';
        return {
          args: { path: this.project.cwd },
          output: text,
          error: true,
          display: text,
          notStarted: true,
        };
      }
      case 'read_many_files':
        return { args: { paths: ['src/**/*.ts'] }, output: fill(rng, CODE, size * 3), display: 'Read files' };
      case 'todo_write': {
        const todos = Array.from({ length: rng.int(2, 7) }, (_, i) => ({
          id: String(i + 1),
          content: sentence(rng),
          status: rng.pick(['pending', 'in_progress', 'completed']),
        }));
        return {
          args: { todos },
          output: 'Todos have been modified successfully.',
          display: { type: 'todo_list', todos },
        };
      }
      case 'web_fetch':
        return {
          args: { url: `https://example.com/${rng.pick(IDENTS)}`, prompt: sentence(rng) },
          output: fill(rng, PROSE, size),
          display: 'Content fetched.',
        };
      default:
        return { args: { fact: sentence(rng) }, output: 'Okay, I have remembered that.', display: '' };
    }
  }

  /** One model request: its telemetry, the assistant record, then each call's telemetry and result records. */
  step(count, final) {
    const rng = this.rng;
    this.requests++;
    const parts = [];
    const thought = rng.chance(0.5) ? fill(rng, PROSE, clamp(rng.logNormal(200, 0.8), 30, 3_000)) : undefined;
    if (thought) parts.push({ text: thought, thought: true });
    const text =
      final || rng.chance(0.6) ? fill(rng, PROSE, clamp(rng.logNormal(final ? 600 : 90, 1), 15, 8_000)) : '';
    if (text) parts.push({ text });
    const made = [];
    for (let i = 0; i < count; i++) {
      const name = rng.weighted(TOOLS);
      const call = { id: `call_${this.callPrefix}_${this.requests}_${i}`, name };
      Object.assign(call, { made: this.tool(name) });
      parts.push({ functionCall: { id: call.id, name, args: call.made.args } });
      made.push(call);
      this.g.stats.toolUses++;
    }
    const output = clamp(text.length / 4 + count * 40 + rng.int(5, 200), 5, 60_000);
    const thoughts = thought ? Math.ceil(thought.length / 4) : 0;
    const { input, cached } = this.apiResponse('system/ui_telemetry (api_response)', {
      output,
      text,
      thoughts,
    });
    this.record(
      'assistant',
      'assistant',
      'assistant_output',
      {
        model: this.model,
        message: { role: 'model', parts },
        usageMetadata: {
          promptTokenCount: input,
          candidatesTokenCount: output,
          thoughtsTokenCount: thoughts,
          totalTokenCount: input + output,
          cachedContentTokenCount: cached,
        },
        contextWindowSize: 1_000_000,
      },
      2,
      20,
    );
    this.g.stats.messages++;
    // A compressed history keeps model entries without their thoughts.
    this.turnEntries.push({ role: 'model', parts: parts.filter((p) => !p.thought) });
    this.historyBytes += JSON.stringify(parts).length;
    // The calls run in parallel: their telemetry first, in the order they finish, then the results in call order.
    for (const call of [...made].reverse()) {
      const m = call.made;
      this.system(
        'ui_telemetry',
        {
          uiEvent: {
            'event.name': 'qwen-code.tool_call',
            'event.timestamp': iso(this.clock),
            call_id: call.id,
            function_name: call.name,
            function_args: m.args,
            duration_ms: rng.int(5, 30_000),
            status: m.error ? 'error' : 'success',
            execution_status: m.notStarted ? 'not_started' : m.error ? 'error' : 'success',
            success: !m.error,
            decision: 'auto_accept',
            prompt_id: this.promptId(),
            response_id: `chatcmpl-${this.requests}`,
            tool_type: 'native',
            content_length: m.output.length,
            ...(m.metadata ? { metadata: m.metadata } : {}),
          },
        },
        5,
        3_000,
        'system/ui_telemetry (tool_call)',
      );
    }
    this.edited = false;
    for (const call of made) {
      const m = call.made;
      const functionResponse = {
        id: call.id,
        name: call.name,
        response: m.error ? { error: m.output } : { output: m.output },
      };
      const toolCallResult = {
        callId: call.id,
        status: m.error ? 'error' : 'success',
        resultDisplay: m.display,
      };
      if (m.error)
        Object.assign(toolCallResult, {
          error: {},
          errorType: m.notStarted ? 'tool_not_registered' : 'shell_execute_error',
        });
      toolCallResult.executionStatus = m.notStarted ? 'not_started' : m.error ? 'error' : 'success';
      this.record(
        'tool_result',
        'tool_result',
        'tool_result',
        { message: { role: 'user', parts: [{ functionResponse }] }, toolCallResult },
        1,
        20,
      );
      this.g.stats.messages++;
      this.turnEntries.push({ role: 'user', parts: [{ functionResponse }] });
      this.historyBytes += m.output.length;
      this.input += Math.ceil(m.output.length / 4);
    }
    if (made.some((c) => c.name === 'edit' || c.name === 'write_file')) this.attribution();
    this.input += output + rng.int(20, 200);
  }

  /** The memory extractor's request after an answer: a side call, never a turn. */
  sideCall() {
    const id = `managed-auto-memory-extractor-${this.rng.hex(8)}`;
    this.apiResponse('system/ui_telemetry (api_response, side call)', {
      output: this.rng.int(5, 60),
      text: 'Nothing durable to record.',
      promptId: `${this.id}#${id}#0`,
      input: this.rng.int(8_000, 14_000),
      extra: {
        subagent_name: 'managed-auto-memory-extractor',
        subagent_id: id,
        subagent_type: 'managed-auto-memory-extractor',
      },
    });
    this.g.stats.sideCalls++;
  }

  /** The summarizer's request and the compressed history: summary, acknowledgement, files, the turn's tail. */
  compress() {
    const rng = this.rng;
    const summary = `<state_snapshot>\n${fill(rng, PROSE, rng.int(2_000, 8_000))}\n</state_snapshot>`;
    this.apiResponse('system/ui_telemetry (api_response, summarizer)', {
      output: Math.ceil(summary.length / 4),
      text: `<analysis>${sentence(rng)}</analysis>\n${summary}`,
      promptId: `compress-${this.clock}`,
    });
    const files = (this.readFiles.length ? this.readFiles : [`${this.project.cwd}/${this.project.files[0]}`])
      .slice(-rng.int(1, 3))
      .map((path) => ({
        text: `Recently accessed file (full current content embedded):\n\n## ${path}\n\n\`\`\`\n${fill(rng, CODE, clamp(rng.logNormal(2_000, 1), 50, 30_000))}\n\n\`\`\``,
      }));
    // The recent entries of the current turn, starting at a model entry.
    let from = Math.max(0, this.turnEntries.length - rng.int(2, 12));
    while (from > 0 && this.turnEntries[from].role !== 'model') from--;
    const kept = this.turnEntries.slice(from);
    const compressedHistory = [
      {
        role: 'user',
        parts: [
          {
            text: `${summary}\n\nResume the prior task using the summary above. Continue from the last in-flight step; do not acknowledge the summary, do not re-introduce, do not greet the user again.`,
          },
        ],
      },
      { role: 'model', parts: [{ text: ACK }] },
      { role: 'user', parts: files },
      ...kept,
    ];
    const originalTokenCount = this.input;
    this.input = 19_800 + Math.ceil(JSON.stringify(compressedHistory).length / 4);
    this.system('chat_compression', {
      info: {
        originalTokenCount,
        newTokenCount: this.input,
        newTokenCountIsEstimated: true,
        compressionStatus: 1,
        triggerReason: 'token_limit',
        originalTokenCountIsEstimated: true,
      },
      compressedHistory,
      completedToolCallIds: [],
    });
    this.g.stats.messages += 3;
    this.g.stats.compressions++;
    this.historyBytes = 0;
    this.compressAt = rng.int(1_500_000, 3_000_000);
  }
}

function runSession(g, { rng, project, clock, target }) {
  const id = rng.uuid();
  const writer = new JsonlWriter(join(g.projects, project.slug, 'chats', `${id}.jsonl`), g.stats);
  const session = new Session(g, { rng, id, project, clock, writer });
  g.stats.sessions.main++;
  do {
    session.prompt(fill(rng, PROSE, clamp(rng.logNormal(220, 1.1), 10, 12_000)));
    const steps = clamp(rng.logNormal(5, 0.9), 0, 60);
    for (let i = 0; i < steps && writer.bytes < target; i++) {
      // Compressed before a request in the middle of a turn, as the real file shows.
      if (i > 0 && session.historyBytes > session.compressAt) session.compress();
      session.step(rng.chance(0.3) ? rng.int(2, 4) : 1, false);
    }
    session.step(0, true);
    if (rng.chance(0.3)) session.sideCall();
  } while (writer.bytes < target);
  writer.close(session.clock);
}

export function generate({ dir, megabytes, seed = 1 }) {
  if (!dir) throw new Error('generate: dir is required');
  const root = resolve(dir);
  const rng = new Rng(`qwen-corpus/${seed}`);
  const stats = new Stats();
  const g = { stats, projects: join(root, '.qwen', 'projects') };
  const targetBytes = megabytes * MB;
  const projects = Array.from({ length: 3 + Math.ceil(megabytes / 20) }, (_, i) =>
    makeProject(rng.fork(`project${i}`), i),
  );
  for (const project of projects) mkdirSync(join(g.projects, project.slug, 'chats'), { recursive: true });
  const weights = projects.map((p, i) => [1 / (i + 1), p]);
  // One 20 MB "marathon" session (40 % of a corpus under 50 MB) fixes the largest file, which bounds the
  // ingest's per-file memory; the rest are heavy-tailed, a few KB to 12 MB.
  const marathon = Math.min(20 * MB, 0.4 * targetBytes);
  const start = Date.parse('2026-10-05T08:00:00.000Z');
  let index = 0;
  while (stats.bytes < targetBytes) {
    const srng = rng.fork(`session${index}`);
    const wanted = index === 0 ? marathon : clamp(srng.logNormal(250_000, 1.6), 5_000, 12 * MB);
    const target = Math.max(5_000, Math.min(wanted, targetBytes - stats.bytes));
    const clock = start + Math.floor(srng.next() * 50 * 86_400_000);
    runSession(g, { rng: srng, project: srng.weighted(weights), clock, target });
    index++;
  }
  return {
    files: stats.files,
    bytes: stats.bytes,
    lines: stats.lines,
    largestFile: stats.largestFile,
    projects: projects.length,
    sessions: stats.sessions,
    messages: stats.messages,
    toolUses: stats.toolUses,
    compressions: stats.compressions,
    sideCalls: stats.sideCalls,
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
      'usage: node bench/ingest/generate-qwen.mjs --dir DIR [--megabytes 50] [--seed 1]\n',
    );
    process.exit(2);
  }
  const started = performance.now();
  const result = generate({ dir: values.dir, megabytes: Number(values.megabytes), seed: values.seed });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
