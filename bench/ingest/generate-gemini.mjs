#!/usr/bin/env node
// Deterministic generator of a large, realistic Gemini CLI 0.61 corpus for the ingest benchmark.
//
// Modelled on the real 0.61.0 logs in test/fixtures/real/gemini-cli-0.61.0/home/.gemini/tmp/ (see
// src/sources/gemini/README.md): `<root>/.gemini/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`, with
// `<slug>/.project_root` and `.gemini/projects.json` naming the project root (the session's `projectHash` is its
// sha256). Every file opens with the metadata record and a `$set.messages` holding the session context alone;
// then per prompt a `user` message, per model step a `gemini` message (content, thoughts, tokens, model) written
// once when its text arrives and again, whole, with its `toolCalls` (args, the `functionResponse` result, status,
// resultDisplay: diffs with the whole original and new file for edits, the shell's output), then a `user`
// message of the same results, each followed by a `$set` of `lastUpdated` (half of the lines). Resumes (in 30 %
// of the sessions) leave a stub file (metadata + session context) and write `$set.sessionId` and a `$set.messages`
// of the whole history since the last compression (converted to parts, `<id>_response` copies of the results,
// the session context regenerated). Compressions every 1.5–3 MB of history rewrite it as the context, a
// `<state_snapshot>`, the CLI's fixed acknowledgement and the last ~30 % of the history under new ids.
// `invoke_agent` (1 % of the steps) spawns a sub-agent: `chats/<parent id>/<agent id>.jsonl` (`kind: "subagent"`,
// call ids `<agent id>#<turn>-<n>`, ending with `complete_task` and a `$set.summary`).
//
// Module: `generate({ dir, megabytes, seed })` → { files, bytes, lines, largestFile, sessions, messages,
// toolUses, … } (1 MB = 10^6 bytes). `messages` and `toolUses` are what the store must hold: the session context,
// prompts, model messages, one tool message per model message with calls, one context message per resume (its
// text changed) and two per compression (the snapshot and the acknowledgement; the kept copies are no messages).
// CLI:    node bench/ingest/generate-gemini.mjs --dir /tmp/corpus --megabytes 50 [--seed 1]

import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
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

const poolRng = new Rng('gemini-text-pools-v1');
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
    this.sessions = { main: 0, subagent: 0, stubs: 0 };
    this.messages = 0;
    this.toolUses = 0;
    this.resumes = 0;
    this.compressions = 0;
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

/** The session context's id is the same in every session (the CLI derives it from fixed text). */
const CONTEXT_ID = 'd04923d38bb0f6017037e74183378ef4';
const ACK = 'Got it. Thanks for the additional context!';
const MODELS = [
  [6, 'gemini-3.8-flash'],
  [2, 'gemini-3.8-pro'],
  [1, 'gemini-3.1-flash-lite'],
];
const DISPLAY = {
  read_file: 'ReadFile',
  list_directory: 'ReadFolder',
  glob: 'FindFiles',
  grep_search: 'SearchText',
  run_shell_command: 'Shell',
  write_file: 'WriteFile',
  replace: 'Edit',
  read_many_files: 'ReadManyFiles',
  web_fetch: 'WebFetch',
  google_web_search: 'GoogleSearch',
  write_todos: 'WriteTodos',
  save_memory: 'SaveMemory',
  invoke_agent: 'Invoke Subagent',
  complete_task: 'Complete Task',
};
const TOOLS = [
  [24, 'read_file'],
  [22, 'run_shell_command'],
  [12, 'replace'],
  [10, 'grep_search'],
  [7, 'glob'],
  [6, 'list_directory'],
  [5, 'write_file'],
  [4, 'read_many_files'],
  [3, 'write_todos'],
  [2, 'web_fetch'],
  [2, 'google_web_search'],
  [1, 'save_memory'],
];

function makeProject(rng, index) {
  const name = `${rng.pick(['shop', 'billing', 'api', 'web', 'infra', 'docs'])}-${index}`;
  const root = `/home/ada/projects/${name}`;
  const files = Array.from(
    { length: rng.int(6, 40) },
    () => `${rng.pick(['src', 'lib', 'test', 'scripts'])}/${rng.pick(IDENTS)}_${rng.pick(IDENTS)}.py`,
  );
  return {
    slug: name,
    root,
    hash: createHash('sha256').update(root).digest('hex'),
    files: [...new Set(files)],
  };
}

function sessionContext(project, ms) {
  const day = new Date(ms).toLocaleDateString('en-US', {
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    timeZone: 'UTC',
  });
  const tree = project.files.map((f, i) => `${i === project.files.length - 1 ? '└' : '├'}───${f}`).join('\n');
  return (
    `<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is ${day} ` +
    `(formatted according to the user's locale).\nMy operating system is: linux\nThe project's temporary directory is: ` +
    `/home/ada/.gemini/tmp/${project.slug}\n- **Workspace Directories:**\n  - ${project.root}\n- **Directory Structure:**\n\n` +
    `Showing up to 200 items (files + folders). Folders or files indicated with ... contain more items not shown, were ` +
    `ignored, or the display limit (200 items) was reached.\n\n${project.root}/\n${tree}\n\n\n</session_context>`
  );
}

const minute = (ms) => iso(ms).slice(0, 16).replace(':', '-');

// ---------------------------------------------------------------------------------------------------------
// One session log (main or sub-agent).

class Session {
  constructor(g, { rng, id, project, clock, writer, kind }) {
    Object.assign(this, { g, rng, id, project, clock, writer, kind });
    this.model = rng.weighted(MODELS);
    /** The history as the CLI holds it since the last compression, in `$set.messages` form (converted). */
    this.history = [];
    this.historyBytes = 0;
    this.compressAt = rng.int(1_500_000, 3_000_000);
    this.input = 12_000;
    this.turn = 0;
    this.context = undefined;
  }
  tick(lo = 5, hi = 900) {
    this.clock += this.rng.int(lo, hi);
    return iso(this.clock);
  }
  write(kind, value) {
    this.writer.writeJson(kind, value);
  }
  touch() {
    this.write('$set lastUpdated', { $set: { lastUpdated: this.tick(1, 3) } });
  }
  /** `role`: prompt, model, results, copy (a resume's `<id>_response`), context, snapshot, ack. */
  remember(entry, role) {
    const bytes = JSON.stringify(entry).length;
    this.history.push({ entry, role, bytes });
    this.historyBytes += bytes;
  }

  start() {
    const at = iso(this.clock);
    const meta = {
      sessionId: this.id,
      projectHash: this.project.hash,
      startTime: at,
      lastUpdated: at,
      kind: this.kind,
    };
    if (this.kind === 'subagent') meta.directories = [this.project.root];
    this.write('metadata', meta);
    if (this.kind === 'main') {
      this.context = {
        id: CONTEXT_ID,
        timestamp: this.tick(1, 2),
        type: 'user',
        content: [{ text: sessionContext(this.project, this.clock) }],
      };
      this.write('$set messages (start)', {
        $set: { messages: [this.context], lastUpdated: this.context.timestamp },
      });
      this.g.stats.messages++;
      this.remember(this.context, 'context');
    }
  }

  prompt(text) {
    const message = {
      id: this.rng.uuid(),
      timestamp: this.tick(2_000, 120_000),
      type: 'user',
      content: [{ text }],
    };
    this.write('user (prompt)', message);
    this.touch();
    this.g.stats.messages++;
    this.remember(message, 'prompt');
    this.turn++;
  }

  callId(name, index) {
    if (this.kind === 'subagent') return `${this.id}#${this.turn - 1}-${index}`;
    return `${name}__${name}_${this.clock + this.rng.int(0, 40)}_${index}`;
  }

  /** What a call does: its args, the output the model gets and what the CLI shows (resultDisplay). */
  tool(name) {
    const rng = this.rng;
    const path = `${this.project.root}/${rng.pick(this.project.files)}`;
    const size = clamp(rng.logNormal(900, 1.5), 20, 120_000);
    switch (name) {
      case 'read_file': {
        const text = fill(rng, CODE, size);
        return {
          args: { file_path: path },
          output: text,
          display: '',
          description: path.slice(this.project.root.length + 1),
        };
      }
      case 'run_shell_command': {
        const command = `${rng.pick(['pytest -q', 'npm test', 'git status', 'ls -la', 'make lint', 'python -m mypy src'])} ${rng.pick(IDENTS)}`;
        const text = fill(rng, SHELL, size);
        const code = rng.chance(0.15) ? `\nExit Code: ${rng.int(1, 2)}` : '';
        return {
          args: { command, description: sentence(rng).slice(0, 80) },
          output: `<untrusted_context>\nOutput: ${text}${code}\nProcess Group PGID: ${rng.int(1000, 99999)}\n</untrusted_context>`,
          display: text,
          description: command,
        };
      }
      case 'replace':
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
        const file = path.split('/').pop();
        const args =
          name === 'replace'
            ? { file_path: path, instruction: sentence(rng), old_string: oldString, new_string: newString }
            : { file_path: path, content: updated };
        const diff = `Index: ${file}\n===================================================================\n--- ${file}\tCurrent\n+++ ${file}\tProposed\n@@ -1,6 +1,6 @@\n-${oldString.split('\n').join('\n-')}\n+${newString.split('\n').join('\n+')}\n`;
        return {
          args,
          output: `Successfully modified file: ${path} (1 replacements). Here is the updated code:\n${updated.slice(0, 8_000)}`,
          display: {
            fileDiff: diff,
            fileName: file,
            filePath: path,
            originalContent: original,
            newContent: updated,
            diffStat: {
              model_added_lines: rng.int(1, 40),
              model_removed_lines: rng.int(0, 20),
              model_added_chars: newString.length,
              model_removed_chars: oldString.length,
              user_added_lines: 0,
              user_removed_lines: 0,
              user_added_chars: 0,
              user_removed_chars: 0,
            },
            isNewFile: original === '',
            isBuildFile: false,
          },
          description: `${path.slice(this.project.root.length + 1)}: ${oldString.slice(0, 30)} => ${newString.slice(0, 30)}`,
        };
      }
      case 'grep_search': {
        const pattern = rng.pick(IDENTS);
        return {
          args: { pattern },
          output: `Found ${rng.int(1, 60)} matches for pattern "${pattern}" in the workspace directory:\n---\n${fill(rng, CODE, size)}\n---`,
          display: `Found ${rng.int(1, 60)} matches`,
          description: `'${pattern}'`,
        };
      }
      case 'glob':
      case 'list_directory': {
        const listing = this.project.files.map((f) => `${this.project.root}/${f}`).join('\n');
        return {
          args:
            name === 'glob'
              ? { pattern: `**/*.${rng.pick(['py', 'ts', 'md'])}` }
              : { dir_path: this.project.root },
          output: `Found ${this.project.files.length} file(s) within ${this.project.root}, sorted by modification time (newest first):\n${listing}`,
          display:
            name === 'glob'
              ? `Found ${this.project.files.length} matching file(s)`
              : { summary: `Found ${this.project.files.length} item(s).`, files: this.project.files },
          description: '.',
        };
      }
      case 'read_many_files':
        return {
          args: { include: ['src/**/*.py'] },
          output: fill(rng, CODE, size * 3),
          display: 'Read files',
          description: 'src/**/*.py',
        };
      case 'write_todos': {
        const todos = Array.from({ length: rng.int(2, 7) }, () => ({
          description: sentence(rng),
          status: rng.pick(['pending', 'in_progress', 'completed']),
        }));
        return {
          args: { todos },
          output: `Successfully updated the todo list. The current list is now:\n${todos.map((t, i) => `${i + 1}. [${t.status}] ${t.description}`).join('\n')}`,
          display: { todos },
          description: 'Set todos',
        };
      }
      case 'web_fetch':
      case 'google_web_search':
        return {
          args: { prompt: sentence(rng) },
          output: fill(rng, PROSE, size),
          display: 'Search results returned.',
          description: sentence(rng).slice(0, 60),
        };
      default:
        return {
          args: { fact: sentence(rng) },
          output: 'Okay, I have remembered that.',
          display: '',
          description: 'Saving memory',
        };
    }
  }

  /**
   * One model step: the `gemini` message when its text arrives, again with its toolCalls once they are done,
   * then the results as a `user` message. Returns the model message as a resume converts it.
   */
  step(callNames, { final = false, spawn } = {}) {
    const rng = this.rng;
    const id = rng.uuid();
    const timestamp = this.tick(300, 9_000);
    const thoughts = rng.chance(0.6)
      ? Array.from({ length: rng.int(1, 3) }, () => ({
          subject: sentence(rng).slice(0, 40),
          description: fill(rng, PROSE, clamp(rng.logNormal(250, 0.8), 40, 3_000)),
          timestamp,
        }))
      : [];
    const text =
      final || rng.chance(0.45)
        ? fill(rng, PROSE, clamp(rng.logNormal(final ? 700 : 120, 1), 20, 8_000))
        : '';
    const output = clamp(text.length / 4 + rng.int(10, 400), 5, 60_000);
    const thoughtTokens = thoughts.reduce((n, t) => n + Math.ceil(t.description.length / 4), 0);
    const cached = rng.chance(0.7) ? Math.floor(this.input * rng.next() * 0.9) : 0;
    const tokens = {
      input: this.input,
      output,
      cached,
      thoughts: thoughtTokens,
      tool: 0,
      total: this.input + output + thoughtTokens,
    };
    const first = { id, timestamp, type: 'gemini', content: text, thoughts, tokens, model: this.model };
    this.write('gemini (first write)', first);
    this.touch();
    this.g.stats.messages++;
    const converted = {
      id,
      timestamp,
      type: 'gemini',
      content: [
        ...thoughts.map((t) => ({ text: `**${t.subject}** ${t.description}`, thought: true })),
        ...(text ? [{ text }] : []),
      ],
    };
    if (callNames.length === 0) {
      this.remember(converted, 'model');
      this.input += output + rng.int(50, 400);
      return;
    }
    const calls = [];
    const responses = [];
    callNames.forEach((name, index) => {
      const callId = this.callId(name, index);
      const made =
        name === 'invoke_agent'
          ? spawn(callId)
          : name === 'complete_task'
            ? this.completion()
            : this.tool(name);
      const failed = name === 'read_file' && rng.chance(0.04);
      const response = failed ? { error: `File not found: ${made.args.file_path}` } : { output: made.output };
      const functionResponse = { functionResponse: { id: callId, name, response } };
      const call = {
        id: callId,
        name,
        args: made.args,
        result: [functionResponse],
        status: failed ? 'error' : 'success',
        timestamp: this.tick(20, 4_000),
        ...(made.agentId ? { agentId: made.agentId } : {}),
        resultDisplay: failed ? 'File not found.' : made.display,
        description: made.description,
        displayName: DISPLAY[name] ?? name,
        renderOutputAsMarkdown: name !== 'run_shell_command',
      };
      calls.push(call);
      responses.push(functionResponse);
      converted.content.push({ functionCall: { id: callId, name, args: made.args } });
      this.g.stats.toolUses++;
    });
    this.write('gemini (with toolCalls)', { ...first, toolCalls: calls });
    const results = { id: rng.uuid(), timestamp: this.tick(5, 200), type: 'user', content: responses };
    this.write('user (results)', results);
    this.touch();
    this.g.stats.messages++;
    this.remember(converted, 'model');
    this.remember({ id: `${id}_response`, timestamp, type: 'user', content: responses }, 'copy');
    this.remember(results, 'results');
    this.input += output + Math.ceil(JSON.stringify(responses).length / 4);
  }

  completion() {
    const response = fill(this.rng, PROSE, clamp(this.rng.logNormal(600, 0.9), 60, 8_000));
    this.result = response;
    return {
      args: { result: { response } },
      output: 'Output submitted and task completed.',
      display: 'Output submitted and task completed.',
      description: 'Completing task and submitting results.',
    };
  }

  /** The history as a `$set.messages` writes it (the resume copies of results included). */
  listed() {
    const at = iso(this.clock);
    return this.history.map(({ entry }) => ({ ...entry, timestamp: at }));
  }

  /** `gemini --resume`: a stub file from the start, then the whole history again in the resumed file. */
  resume() {
    const g = this.g;
    // At least a day later: the regenerated context has another date, so it is a message of its own.
    this.clock += this.rng.int(86_400_000, 3 * 86_400_000);
    const stubAt = this.clock;
    const stub = new JsonlWriter(
      join(g.chats(this.project), `session-${minute(stubAt)}-${this.id.slice(0, 8)}.jsonl`),
      g.stats,
    );
    const at = iso(stubAt);
    stub.writeJson('metadata', {
      sessionId: this.id,
      projectHash: this.project.hash,
      startTime: at,
      lastUpdated: at,
      kind: 'main',
    });
    this.context = {
      id: CONTEXT_ID,
      timestamp: iso(stubAt + 1),
      type: 'user',
      content: [{ text: sessionContext(this.project, stubAt) }],
    };
    stub.writeJson('$set messages (stub)', {
      $set: { messages: [this.context], lastUpdated: this.context.timestamp },
    });
    stub.close(stubAt + 1);
    g.stats.sessions.stubs++;
    this.tick(40, 200);
    this.write('$set sessionId', { $set: { sessionId: this.id } });
    this.history[0] = { entry: this.context, role: 'context', bytes: this.history[0].bytes };
    this.write('$set messages (resume)', { $set: { messages: this.listed(), lastUpdated: iso(this.clock) } });
    // The regenerated context (another date) is a message of its own.
    g.stats.messages++;
    g.stats.resumes++;
  }

  /** A compression: the context, the snapshot, the acknowledgement and the last ~30 % of the history, anew. */
  compress() {
    const rng = this.rng;
    const keepBytes = this.historyBytes * 0.3;
    let from = this.history.length;
    let kept = 0;
    while (from > 1 && kept < keepBytes) kept += this.history[--from].bytes;
    // The kept tail starts at a prompt (never a result) and holds no resume copies (the CLI's history has none).
    while (from < this.history.length && this.history[from].role !== 'prompt') from++;
    const at = this.tick(200, 2_000);
    const tail = this.history
      .slice(from)
      .filter(({ role }) => role !== 'copy')
      .map(({ entry }) => ({ ...entry, id: rng.uuid(), timestamp: at }));
    const snapshot = {
      id: rng.uuid(),
      timestamp: at,
      type: 'user',
      content: [{ text: `<state_snapshot>\n${fill(rng, PROSE, rng.int(2_000, 8_000))}\n</state_snapshot>` }],
    };
    const ack = { id: rng.uuid(), timestamp: at, type: 'gemini', content: [{ text: ACK }] };
    const messages = [{ ...this.context, timestamp: at }, snapshot, ack, ...tail];
    this.write('$set messages (compression)', { $set: { messages, lastUpdated: at } });
    this.g.stats.messages += 2;
    this.g.stats.compressions++;
    this.history = [];
    this.historyBytes = 0;
    const roleOf = (entry) =>
      entry.type === 'gemini' ? 'model' : entry.content[0]?.text === undefined ? 'results' : 'prompt';
    this.remember(messages[0], 'context');
    this.remember(snapshot, 'snapshot');
    this.remember(ack, 'ack');
    for (const entry of tail) this.remember(entry, roleOf(entry));
    this.input = 12_000 + Math.ceil(this.historyBytes / 4);
    this.compressAt = rng.int(1_500_000, 3_000_000);
  }
}

// ---------------------------------------------------------------------------------------------------------

function stepCalls(rng, allowSpawn) {
  const n = rng.chance(0.3) ? rng.int(2, 4) : 1;
  const names = [];
  for (let i = 0; i < n; i++)
    names.push(allowSpawn && i === 0 && rng.chance(0.01) ? 'invoke_agent' : rng.weighted(TOOLS));
  return names;
}

/** A sub-agent's log, written while its parent's invoke_agent call runs. */
function subagent(g, parent, callId) {
  const rng = parent.rng.fork(`agent-${callId}`);
  const agentId = rng.uuid();
  const name = rng.pick(['generalist', 'codebase_investigator']);
  const writer = new JsonlWriter(join(g.chats(parent.project), parent.id, `${agentId}.jsonl`), g.stats);
  const child = new Session(g, {
    rng,
    id: agentId,
    project: parent.project,
    clock: parent.clock + 30,
    writer,
    kind: 'subagent',
  });
  g.stats.sessions.subagent++;
  child.start();
  const task = fill(rng, PROSE, rng.int(80, 800));
  child.prompt(task);
  const target = clamp(rng.logNormal(60_000, 1), 4_000, 1_500_000);
  while (writer.bytes < target) {
    child.step(stepCalls(rng, false));
    child.turn++;
  }
  child.step(['complete_task']);
  child.write('$set summary', { $set: { summary: JSON.stringify({ response: child.result }, null, 2) } });
  writer.close(child.clock);
  parent.clock = child.clock + 20;
  const result = JSON.stringify({ response: child.result }, null, 2);
  return {
    args: { agent_name: name, prompt: task },
    agentId,
    output: `Subagent '${name}' finished.\nTermination Reason: GOAL\nResult:\n${result}`,
    display: {
      isSubagentProgress: true,
      agentName: name,
      recentActivity: [],
      state: 'completed',
      result,
      terminateReason: 'GOAL',
    },
    description: `Delegating to agent '${name}'`,
  };
}

function runSession(g, { rng, project, clock, target }) {
  const id = rng.uuid();
  const writer = new JsonlWriter(
    join(g.chats(project), `session-${minute(clock)}-${id.slice(0, 8)}.jsonl`),
    g.stats,
  );
  const session = new Session(g, { rng, id, project, clock, writer, kind: 'main' });
  g.stats.sessions.main++;
  session.start();
  // Sub-agents and stubs count towards the session's size.
  const from = g.stats.bytes;
  const spent = () => g.stats.bytes - from;
  const resumes = rng.chance(0.3) ? rng.int(1, 3) : 0;
  const resumeEvery = target / (resumes + 1);
  let nextResume = resumeEvery;
  do {
    if (resumes > 0 && spent() >= nextResume && nextResume < target) {
      session.resume();
      nextResume += resumeEvery;
    }
    if (session.historyBytes > session.compressAt) session.compress();
    session.prompt(fill(rng, PROSE, clamp(rng.logNormal(220, 1.1), 10, 12_000)));
    const steps = clamp(rng.logNormal(5, 0.9), 0, 60);
    for (let i = 0; i < steps && spent() < target; i++)
      session.step(stepCalls(rng, true), { spawn: (callId) => subagent(g, session, callId) });
    session.step([], { final: true });
  } while (spent() < target);
  if (rng.chance(0.2)) session.write('$set summary', { $set: { summary: sentence(rng).slice(0, 70) } });
  writer.close(session.clock);
}

export function generate({ dir, megabytes, seed = 1 }) {
  if (!dir) throw new Error('generate: dir is required');
  const root = resolve(dir);
  const rng = new Rng(`gemini-corpus/${seed}`);
  const stats = new Stats();
  const home = join(root, '.gemini');
  const g = { stats, chats: (project) => join(home, 'tmp', project.slug, 'chats') };
  const targetBytes = megabytes * MB;
  const projects = Array.from({ length: 3 + Math.ceil(megabytes / 20) }, (_, i) =>
    makeProject(rng.fork(`project${i}`), i),
  );
  for (const project of projects) {
    mkdirSync(g.chats(project), { recursive: true });
    writeFileSync(join(home, 'tmp', project.slug, '.project_root'), project.root);
  }
  writeFileSync(
    join(home, 'projects.json'),
    `${JSON.stringify({ projects: Object.fromEntries(projects.map((p) => [p.root, p.slug])) }, null, 2)}\n`,
  );
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
    resumes: stats.resumes,
    compressions: stats.compressions,
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
      'usage: node bench/ingest/generate-gemini.mjs --dir DIR [--megabytes 50] [--seed 1]\n',
    );
    process.exit(2);
  }
  const started = performance.now();
  const result = generate({ dir: values.dir, megabytes: Number(values.megabytes), seed: values.seed });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
