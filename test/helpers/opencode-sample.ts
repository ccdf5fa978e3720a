// The committed opencode sample as the `replay --agent opencode` e2e files use it (opencode-replay*.test.ts):
// a store of the file's own holding it, its main session's recorded steps and results, a workspace like the
// one it was recorded in, the replay's arguments, and what the tests read back (pairs, files, processes).
// The bindings `dir`, `db`, `mainId`, `steps` and `results` are set by useSample's beforeAll.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root, run, tempDir } from './cli.js';
import { type ChatRequest, contentText, type ModelServer, type ScriptedReply } from './model-server.js';
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

/** `replay` of the sample's main session through opencode, the scripted server as the model. */
export function scripted(server: { baseURL: string }, ws: string, out: string): string[] {
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
export function recordedReplay(ws: string, out: string): string[] {
  return ['replay', mainId, '--db', db, '--agent', 'opencode', '--workspace', ws, '--out', out];
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
 * The committed opencode sample in a store of this file's own (in a temporary directory `prefix…`), its main
 * session and what opencode would be asked: registered as the file's beforeAll/afterAll.
 */
export function useSample(prefix: string): void {
  beforeAll(async () => {
    dir = tempDir(prefix);
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
