// The committed opencode sample as the `replay --agent opencode` e2e files use it (opencode-replay*.test.ts):
// a store of the file's own holding it, its main session's recorded steps and results, a workspace like the
// one it was recorded in, the replay's arguments, and what the tests read back (pairs, files, processes).
// The same store holds a short session cut from the main one (writeShortSample), for the tests whose point
// is not the session's length. The bindings `dir`, `db`, `mainId`, `steps`, `results`, `shortId` and
// `shortSteps` are set by useSample's beforeAll.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root, run, tempDir } from './cli.js';
import { type ChatRequest, contentText, type ModelServer, type ScriptedReply } from './model-server.js';
import { titles } from './opencode-scenario.js';
import { recordedSteps } from './recorded-steps.js';

export interface PairLine {
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

export let dir: ReturnType<typeof tempDir>;
export let db: string;
export let mainId: string;
/** What opencode would be asked, prompt by prompt: the recorded turns up to the first without a tool call. */
export let steps: ScriptedReply[][];
/** The recorded results of the main session's calls, in call order, as text. */
export let results: { output: string; isError: boolean }[];
/** The short session's id (writeShortSample) and its steps (one prompt: the edit, the bash, the answer). */
export let shortId: string;
export let shortSteps: ScriptedReply[][];

/** The title of the session writeShortSample leaves. */
export const shortTitle = `${titles.fix} (short)`;

/**
 * A copy of the committed opencode sample as `<into>/opencode.db` holding only a short session cut from the
 * main one, its rows as opencode wrote them: the first prompt with three of its recorded steps — the `edit` of
 * src/todos.js, the `bash` that deleted debug.log, and the closing answer. One opencode run of three steps
 * (a write and a command among them) instead of three runs of twelve, for the tests whose point is not the
 * session's length: a kill, the checker, the sandbox, git, AGENTS.md, the run's secret. It has a session
 * id, title and message ids of its own, so it can share a store with the full sample. Returns `into`, to ingest.
 */
export function writeShortSample(into: string): string {
  mkdirSync(into, { recursive: true });
  const file = join(into, 'opencode.db');
  copyFileSync(join(root, 'sample-sessions', 'opencode', 'opencode.db'), file);
  const handle = new Database(file);
  try {
    const main = handle.prepare('SELECT id FROM session WHERE title = ?').pluck().get(titles.fix) as string;
    const messages = handle
      .prepare('SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id')
      .all(main) as { id: string; data: string }[];
    const tools = (message: string) =>
      (handle.prepare('SELECT data FROM part WHERE message_id = ?').pluck().all(message) as string[])
        .map((data) => JSON.parse(data) as { type: string; tool?: string; state?: { input?: unknown } })
        .filter((part) => part.type === 'tool');
    const prompt = messages[0]?.id;
    const keep = messages.filter(({ id, data }) => {
      if (id === prompt) return true;
      if ((JSON.parse(data) as { parentID?: string }).parentID !== prompt) return false;
      const calls = tools(id);
      return (
        calls.length === 0 ||
        calls.some(
          (call) =>
            call.tool === 'edit' ||
            (call.tool === 'bash' && (call.state?.input as { command?: string })?.command === 'rm debug.log'),
        )
      );
    });
    if (keep.length !== 4) throw new Error(`the short sample wants 4 messages, found ${keep.length}`);
    const short = 'ses_short0000000000000000000';
    const ids = keep.map((message) => message.id);
    const marks = ids.map(() => '?').join(', ');
    handle.pragma('foreign_keys = OFF');
    handle.transaction(() => {
      handle.prepare(`DELETE FROM part WHERE message_id NOT IN (${marks})`).run(...ids);
      handle.prepare(`DELETE FROM message WHERE id NOT IN (${marks})`).run(...ids);
      handle.prepare('DELETE FROM session WHERE id != ?').run(main);
      handle.prepare('DELETE FROM event').run();
      handle.prepare('DELETE FROM event_sequence').run();
      handle.prepare('UPDATE session SET id = ?, title = ? WHERE id = ?').run(short, shortTitle, main);
      // Ids of its own too: messages with the main session's ids would be stored as a copy of its history.
      handle
        .prepare("UPDATE message SET session_id = ?, id = id || '_short', data = replace(data, ?, ?)")
        .run(short, `"parentID":"${prompt}"`, `"parentID":"${prompt}_short"`);
      handle
        .prepare("UPDATE part SET session_id = ?, id = id || '_short', message_id = message_id || '_short'")
        .run(short);
    })();
  } finally {
    handle.close();
  }
  return into;
}

/** Every file under a directory with a hash of its content: what must not change. */
export function snapshot(path: string): Map<string, string> {
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
export function workspace(name: string): string {
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

export const isTitle = (request: ChatRequest) =>
  contentText(request.messages?.[0]?.content).includes('You are a title generator');
export const titleResponder = (request: ChatRequest): ScriptedReply | undefined =>
  isTitle(request) ? { text: 'Replayed title' } : undefined;
export const stepRequests = (server: ModelServer) =>
  server.chatRequests().filter((request) => request.body && !isTitle(request.body));

/** `replay` of the sample's main session (or `session`) through opencode, the scripted server as the model. */
export function scripted(
  server: { baseURL: string },
  ws: string,
  out: string,
  session: string = mainId,
): string[] {
  return [
    'replay',
    session,
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

/** `replay` of the sample's main session (or `session`) through opencode with the recorded model (no server). */
export function recordedReplay(ws: string, out: string, session: string = mainId): string[] {
  return ['replay', session, '--db', db, '--agent', 'opencode', '--workspace', ws, '--out', out];
}

export function readPairs(file: string): PairLine[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PairLine);
}

/**
 * The committed opencode sample and its short cut (writeShortSample) in a store of this file's own (in a
 * temporary directory `prefix…`), their sessions and what opencode would be asked: registered as the file's
 * beforeAll/afterAll.
 */
export function useSample(prefix: string): void {
  beforeAll(async () => {
    dir = tempDir(prefix);
    db = join(dir.path, 'store.db');
    const short = writeShortSample(join(dir.path, 'short-sample'));
    const ingest = await run(['ingest', join(root, 'sample-sessions', 'opencode'), short, '--db', db]);
    expect(ingest.exitCode).toBe(0);
    const handle = openDb(db);
    try {
      const store = new SessionStore(handle);
      const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
        id: string;
        title: string;
      }[];
      mainId = listed.find((s) => s.title === titles.fix)?.id ?? '';
      shortId = listed.find((s) => s.title === shortTitle)?.id ?? '';
      const loaded = store.load(mainId);
      if (!loaded) throw new Error('the sample main session is not in the store');
      ({ steps, results } = recordedSteps(loaded.session.messages, loaded.own));
      const cut = store.load(shortId);
      if (!cut) throw new Error('the short sample session is not in the store');
      shortSteps = recordedSteps(cut.session.messages, cut.own).steps;
    } finally {
      handle.close();
    }
  });

  afterAll(() => dir?.remove());
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PIDs whose parent is `pid` (from /proc). */
export function childrenOf(pid: number): number[] {
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

export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie has exited; only its parent has not reaped it yet.
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
