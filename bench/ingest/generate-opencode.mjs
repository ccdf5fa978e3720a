#!/usr/bin/env node
// Deterministic generator of a large, realistic opencode data dir for the ingest benchmark: one `opencode.db`
// with the V1 tables exactly as opencode 1.18.33 creates them (packages/opencode/src/session/session.sql.ts),
// filled the way the real binary fills them (see sample-sessions/opencode/opencode.db): one assistant message
// per model step with step-start / reasoning / text / tool / step-finish parts, call and result in the same
// tool part, outputs up to opencode's 50 KB tool-output cap, `task` sub-agents as child sessions, automatic
// compactions (a `compaction` part, a `summary: true` assistant message, a synthetic "Continue" prompt, older
// outputs marked `time.compacted`), and failed model calls.
//
// Module: `generate({ dir, megabytes, seed })` → { files, bytes, sessions, toolUses, ... } (1 MB = 10^6 bytes).
// CLI:    node bench/ingest/generate-opencode.mjs --dir /tmp/opencode-data --megabytes 200 [--seed 1]

import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { Rng as SharedRng } from './random.mjs';

const MB = 1e6;

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The shared generator with this corpus's own `chars` and `logNormal` (their signatures and tails differ from
 * the other generators', and the corpus must stay byte-identical).
 */
class Rng extends SharedRng {
  chars(n, alphabet = B62) {
    let out = '';
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }
  /** Heavy-tailed sizes: most outputs are small, a few are near the cap. */
  logNormal(median, sigma) {
    const u = Math.max(this.next(), 1e-12);
    const v = this.next();
    return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  }
}

// The V1 schema as opencode 1.18.33 creates it (read from a store the real binary wrote).
const schema = `
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, icon_url text,
  icon_url_override text, icon_color text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_initialized integer, sandboxes text NOT NULL, commands text);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text,
  slug text NOT NULL, directory text NOT NULL, path text, title text NOT NULL, version text NOT NULL,
  share_url text, summary_additions integer, summary_deletions integer, summary_files integer, summary_diffs text,
  metadata text, cost real DEFAULT 0 NOT NULL, tokens_input integer DEFAULT 0 NOT NULL,
  tokens_output integer DEFAULT 0 NOT NULL, tokens_reasoning integer DEFAULT 0 NOT NULL,
  tokens_cache_read integer DEFAULT 0 NOT NULL, tokens_cache_write integer DEFAULT 0 NOT NULL, revert text,
  permission text, agent text, model text, time_created integer NOT NULL, time_updated integer NOT NULL,
  time_compacting integer, time_archived integer,
  CONSTRAINT fk_session_project_id_project_id_fk FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
  time_updated integer NOT NULL, data text NOT NULL,
  CONSTRAINT fk_message_session_id_session_id_fk FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL,
  CONSTRAINT fk_part_message_id_message_id_fk FOREIGN KEY (message_id) REFERENCES message(id) ON DELETE CASCADE);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_project_idx ON session (project_id);
CREATE INDEX session_parent_idx ON session (parent_id);
`;

const WORDS = (
  'the a limit route handler todo list returns items off by one slice test fails passes fix bug cache ' +
  'request response parse config module import export function value index array string number error'
).split(' ');
const FILES = [
  'src/todos.js',
  'src/routes.js',
  'src/db.js',
  'src/server.js',
  'test/todos.test.js',
  'README.md',
];
const MODEL = { providerID: 'anthropic', modelID: 'claude-sonnet-4-5' };

function sentence(rng, words) {
  return Array.from({ length: words }, () => rng.pick(WORDS)).join(' ');
}

/** Text of about `bytes` bytes that looks like numbered source lines (what `read` returns). */
function sourceLines(rng, bytes) {
  const lines = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const line = `${n}: ${'  '.repeat(rng.int(0, 3))}${sentence(rng, rng.int(3, 12))};`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

/** Ascending, time-sortable ids like opencode's (`msg_…`, `prt_…`): hex time, a counter, random tail. */
class Ids {
  constructor(rng) {
    this.rng = rng;
    this.counter = 0;
  }
  next(prefix, time) {
    this.counter = (this.counter + 1) % 4096;
    return `${prefix}_${time.toString(16).padStart(11, '0')}${this.counter.toString(16).padStart(3, '0')}${this.rng.chars(14)}`;
  }
}

function tokens(rng, input) {
  return {
    total: input + 300,
    input,
    output: rng.int(20, 900),
    reasoning: 0,
    cache: { read: rng.int(0, input), write: rng.int(0, 2000) },
  };
}

function toolPart(rng, cwd, tool, time, index) {
  const callID = `toolu_${rng.chars(24)}`;
  const size = Math.min(50_000, Math.max(80, Math.round(rng.logNormal(1500, 1.4))));
  const file = `${cwd}/${rng.pick(FILES)}`;
  const inputs = {
    read: { filePath: file },
    bash: {
      command: rng.pick(['npm test', 'git status', 'ls -la', 'node test.js']),
      description: sentence(rng, 3),
    },
    grep: { pattern: rng.pick(WORDS), include: '*.js' },
    glob: { pattern: 'src/**/*.js' },
    edit: { filePath: file, oldString: sentence(rng, 4), newString: sentence(rng, 4) },
    write: { filePath: file, content: sourceLines(rng, Math.min(size, 8000)) },
  };
  const outputs = {
    read: () => `<path>${file}</path>\n<type>file</type>\n<content>\n${sourceLines(rng, size)}\n</content>`,
    bash: () => sourceLines(rng, size),
    grep: () => `Found ${rng.int(1, 40)} matches\n${sourceLines(rng, Math.min(size, 6000))}`,
    glob: () => FILES.map((f) => `${cwd}/${f}`).join('\n'),
    edit: () => 'Edit applied successfully.',
    write: () => 'Wrote file successfully.',
  };
  const failed = rng.chance(0.04);
  const state = failed
    ? {
        status: 'error',
        input: inputs[tool],
        error: `File not found: ${file}`,
        time: { start: time, end: time + 40 },
      }
    : {
        status: 'completed',
        input: inputs[tool],
        output: outputs[tool](),
        title: tool === 'bash' ? inputs.bash.command : file,
        metadata: tool === 'bash' ? { exit: 0, truncated: false } : { truncated: false },
        time: { start: time, end: time + rng.int(20, 3000) },
      };
  return { data: { type: 'tool', tool, callID, state }, index, callID };
}

class Writer {
  constructor(db, stats) {
    this.stats = stats;
    this.session = db.prepare(
      `INSERT INTO session (id, project_id, parent_id, slug, directory, path, title, version, permission, agent, model,
         tokens_input, tokens_output, time_created, time_updated)
       VALUES (?, 'global', ?, ?, ?, ?, ?, '1.18.33', ?, 'build', ?, ?, ?, ?, ?)`,
    );
    this.message = db.prepare(
      'INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)',
    );
    this.part = db.prepare(
      'INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)',
    );
    // opencode rewrites a part in place when it prunes its output.
    this.prune = db.prepare('UPDATE part SET time_updated = ?, data = ? WHERE id = ?');
  }
  addMessage(id, session, time, data) {
    const text = JSON.stringify(data);
    this.message.run(id, session, time, time + 50, text);
    this.stats.rows++;
    this.stats.payload += text.length;
  }
  addPart(id, message, session, time, data) {
    const text = JSON.stringify(data);
    this.part.run(id, message, session, time, time + 10, text);
    this.stats.rows++;
    this.stats.payload += text.length;
  }
}

/** One session (and the sub-agent sessions its `task` calls start), written into the tables. */
function writeSession(w, rng, { id, parentID, cwd, start, turns, stats, ids }) {
  let clock = start;
  const tick = (lo, hi) => {
    clock += rng.int(lo, hi);
    return clock;
  };
  const assistantBase = (parent) => ({
    parentID: parent,
    role: 'assistant',
    mode: 'build',
    agent: parentID ? 'general' : 'build',
    path: { cwd, root: '/' },
    cost: 0,
    modelID: MODEL.modelID,
    providerID: MODEL.providerID,
  });
  const completedTools = [];
  const children = [];
  let context = 3000;
  for (let turn = 0; turn < turns; turn++) {
    const userTime = tick(20_000, 600_000);
    const user = ids.next('msg', userTime);
    w.addMessage(user, id, userTime, {
      role: 'user',
      time: { created: userTime },
      agent: 'build',
      model: MODEL,
      summary: { diffs: [] },
    });
    w.addPart(ids.next('prt', userTime), user, id, userTime, {
      type: 'text',
      text: sentence(rng, rng.int(8, 60)),
    });
    const steps = rng.int(1, 12);
    for (let step = 0; step < steps; step++) {
      const time = tick(500, 20_000);
      const message = ids.next('msg', time);
      const last = step === steps - 1;
      const failed = rng.chance(0.01);
      context += rng.int(200, 4000);
      const used = tokens(rng, context);
      const info = { ...assistantBase(user), tokens: used, time: { created: time, completed: time + 4000 } };
      if (failed)
        info.error = {
          name: 'APIError',
          data: { message: 'Overloaded', statusCode: 529, isRetryable: true },
        };
      else info.finish = last ? 'stop' : 'tool-calls';
      w.addMessage(message, id, time, info);
      stats.messages++;
      if (failed) continue;
      w.addPart(ids.next('prt', time), message, id, time, {
        type: 'step-start',
        snapshot: rng.chars(40, '0123456789abcdef'),
      });
      if (rng.chance(0.3))
        w.addPart(ids.next('prt', time + 1), message, id, time + 1, {
          type: 'reasoning',
          text: sentence(rng, rng.int(20, 200)),
          time: { start: time, end: time + 900 },
        });
      if (last || rng.chance(0.4))
        w.addPart(ids.next('prt', time + 2), message, id, time + 2, {
          type: 'text',
          text: sentence(rng, rng.int(10, 150)),
          time: { start: time, end: time + 1000 },
        });
      if (!last) {
        const calls = rng.chance(0.2) ? rng.int(2, 3) : 1;
        for (let c = 0; c < calls; c++) {
          const partTime = time + 3 + c;
          const partId = ids.next('prt', partTime);
          if (!parentID && rng.chance(0.03)) {
            const child = `ses_${rng.chars(26)}`;
            children.push({ id: child, start: partTime });
            const answer = sentence(rng, rng.int(10, 60));
            w.addPart(partId, message, id, partTime, {
              type: 'tool',
              tool: 'task',
              callID: `toolu_${rng.chars(24)}`,
              state: {
                status: 'completed',
                input: { description: sentence(rng, 3), prompt: sentence(rng, 30), subagent_type: 'general' },
                output: `<task id="${child}" state="completed">\n<task_result>\n${answer}\n</task_result>\n</task>`,
                title: sentence(rng, 3),
                metadata: { parentSessionId: id, sessionId: child, model: MODEL, truncated: false },
                time: { start: partTime, end: partTime + 60_000 },
              },
            });
            stats.toolUses++;
            continue;
          }
          const tool = rng.pick(['read', 'read', 'read', 'bash', 'bash', 'grep', 'glob', 'edit', 'write']);
          const part = toolPart(rng, cwd, tool, partTime, c);
          w.addPart(partId, message, id, partTime, part.data);
          completedTools.push({ partId, message, time: partTime, data: part.data });
          stats.toolUses++;
        }
      }
      w.addPart(ids.next('prt', time + 9), message, id, time + 9, {
        reason: last ? 'stop' : 'tool-calls',
        type: 'step-finish',
        tokens: used,
        cost: 0,
      });
    }
    // An automatic compaction when the context grew large: older tool outputs are pruned (kept, marked).
    if (!parentID && context > 150_000) {
      const time = tick(100, 1000);
      const trigger = ids.next('msg', time);
      w.addMessage(trigger, id, time, {
        role: 'user',
        time: { created: time },
        agent: 'build',
        model: MODEL,
      });
      w.addPart(ids.next('prt', time), trigger, id, time, {
        type: 'compaction',
        auto: true,
        overflow: false,
      });
      const summaryTime = tick(100, 1000);
      const summary = ids.next('msg', summaryTime);
      w.addMessage(summary, id, summaryTime, {
        ...assistantBase(trigger),
        mode: 'compaction',
        agent: 'compaction',
        summary: true,
        finish: 'stop',
        tokens: tokens(rng, context),
        time: { created: summaryTime, completed: summaryTime + 9000 },
      });
      w.addPart(ids.next('prt', summaryTime), summary, id, summaryTime, { type: 'step-start' });
      w.addPart(ids.next('prt', summaryTime + 1), summary, id, summaryTime + 1, {
        type: 'text',
        text: `## Objective\n- ${sentence(rng, 20)}\n\n## Work State\n${sentence(rng, 200)}`,
      });
      const continueTime = tick(10, 100);
      const resume = ids.next('msg', continueTime);
      w.addMessage(resume, id, continueTime, {
        role: 'user',
        time: { created: continueTime },
        agent: 'build',
        model: MODEL,
      });
      w.addPart(ids.next('prt', continueTime), resume, id, continueTime, {
        type: 'text',
        synthetic: true,
        metadata: { compaction_continue: true },
        text: 'Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.',
      });
      stats.compactions++;
      context = 5000;
      for (const tool of completedTools.splice(0, Math.floor(completedTools.length * 0.6))) {
        if (tool.data.state.status !== 'completed') continue;
        tool.data.state.time.compacted = summaryTime;
        w.prune.run(summaryTime, JSON.stringify(tool.data), tool.partId);
      }
    }
  }
  w.session.run(
    id,
    parentID ?? null,
    rng.pick(['brave-otter', 'calm-lynx', 'swift-heron', 'quiet-canyon']),
    cwd,
    cwd.slice(1),
    parentID ? `${sentence(rng, 3)} (@general subagent)` : sentence(rng, rng.int(3, 7)),
    JSON.stringify([{ permission: 'question', pattern: '*', action: 'deny' }]),
    JSON.stringify({ id: MODEL.modelID, providerID: MODEL.providerID }),
    context,
    0,
    start,
    clock,
  );
  stats.sessions++;
  for (const child of children) {
    writeSession(w, rng, { id: child.id, parentID: id, cwd, start: child.start, turns: 1, stats, ids });
  }
  return clock;
}

export function generate({ dir, megabytes, seed = 1 }) {
  if (!dir) throw new Error('generate: dir is required');
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const file = join(root, 'opencode.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  const rng = new Rng(`opencode-corpus/${seed}`);
  const ids = new Ids(rng);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  // The session row is written after its messages (it carries their totals); the data ends up consistent.
  db.pragma('foreign_keys = OFF');
  db.exec(schema);
  db.prepare(
    "INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 0, 0, '[]')",
  ).run();
  const stats = { sessions: 0, messages: 0, toolUses: 0, compactions: 0, rows: 0, payload: 0 };
  const w = new Writer(db, stats);
  const projects = Array.from({ length: 3 + Math.ceil(megabytes / 40) }, (_, i) => `/home/ada/project-${i}`);
  // Pages, indexes and free space make the file about 1.5 times its JSON payload.
  const target = (megabytes * MB) / 1.5;
  let clock = Date.parse('2026-03-02T08:00:00.000Z');
  let index = 0;
  while (stats.payload < target) {
    const srng = new Rng(`opencode-corpus/${seed}/session${index}`);
    const turns = Math.max(1, Math.round(srng.logNormal(4, 0.9)));
    const id = `ses_${srng.chars(26)}`;
    db.transaction(() => {
      clock =
        writeSession(w, srng, { id, cwd: srng.pick(projects), start: clock, turns, stats, ids }) + 3_600_000;
    })();
    index++;
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return {
    files: 1,
    bytes: statSync(file).size,
    sessions: stats.sessions,
    toolUses: stats.toolUses,
    messages: stats.messages,
    rows: stats.rows,
    compactions: stats.compactions,
  };
}

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
      'usage: node bench/ingest/generate-opencode.mjs --dir DIR [--megabytes 50] [--seed 1]\n',
    );
    process.exit(2);
  }
  const started = performance.now();
  const result = generate({ dir: values.dir, megabytes: Number(values.megabytes), seed: values.seed });
  result.seconds = Number(((performance.now() - started) / 1000).toFixed(2));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
