// Issue 16 end to end: while `replay --agent opencode` runs (our binary, the real opencode), a stranger on the
// same machine knocks on every socket the replay process listens on — found in /proc, not guessed. Without the
// run's secret it gets 401, with the secret but a foreign Host 421; the upstream never hears of it, the agent
// still gets every recorded result (or recorded turn) in order, and the pairs hold no trace of it. The secret,
// read from where the driver writes it, is in none of the pairs file, the store, stdout or stderr. None of it
// depends on the session's length: the session replayed is the sample's short cut (writeShortSample: one
// prompt, an edit, a command and the answer), not its twelve steps over three prompts.
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginFileName } from '../../src/drivers/opencode/plugin.js';
import { isReadOnly } from '../../src/replay/catalogue/index.js';
import { openDb } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { type RawResponse, rawRequest } from '../drivers/opencode/raw-request.js';
import { bin, run, tempDir } from '../helpers/cli.js';
import {
  type ChatRequest,
  contentText,
  type ModelServer,
  type ScriptedReply,
  startModelServer,
} from '../helpers/model-server.js';
import { shortTitle, writeShortSample } from '../helpers/opencode-sample.js';
import { recordedSteps } from '../helpers/recorded-steps.js';

interface PairLine {
  turn: number;
  messages: { role: string; content: unknown }[];
  completion: { content: string | null; tool_calls?: { function: { name: string; arguments: string } }[] };
  original: {
    content: string | null;
    tool_calls?: { function: { name: string; arguments: string } }[];
  } | null;
  match: { tool_calls: string };
}

const marker = 'INTRUDER-MARKER-3d9c1f';
/** The upstream's own key: what the proxy must put on in place of the secret. */
const realKey = 'sk-real-upstream-key-5e7a';

let dir: ReturnType<typeof tempDir>;
let db: string;
let sessionId: string;
/** What opencode is asked, prompt by prompt (the recorded turns up to the first without a tool call). */
let steps: ScriptedReply[][];
/** The recorded results of the session's calls, in order, as text. */
let results: { output: string; isError: boolean }[];
/**
 * The first recorded call that changes something (the `edit`), as the plugin would ask for it. Not a read: the
 * short-circuit gives a repeated read its last result again, so taking a read's result would shift nothing,
 * while the n-th identical `edit` gets the n-th result — a stranger's taking it would leave the agent a miss.
 */
let firstCall: { tool: string; args: unknown };

beforeAll(async () => {
  dir = tempDir('opencode-secret-');
  db = join(dir.path, 'store.db');
  const short = writeShortSample(join(dir.path, 'short-sample'));
  expect((await run(['ingest', short, '--db', db])).exitCode).toBe(0);
  const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
    id: string;
    title: string;
  }[];
  sessionId = listed.find((s) => s.title === shortTitle)?.id ?? '';
  const handle = openDb(db);
  try {
    const loaded = new SessionStore(handle).load(sessionId);
    if (!loaded) throw new Error('the short sample session is not in the store');
    ({ steps, results } = recordedSteps(loaded.session.messages, loaded.own));
    expect(steps.flat()).toHaveLength(3);
    const call = steps
      .flat()
      .flatMap((step) => step.toolCalls ?? [])
      .find((made) => !isReadOnly('opencode', made.name));
    if (!call) throw new Error('the sample session makes no call that changes anything');
    firstCall = { tool: call.name, args: call.arguments };
  } finally {
    handle.close();
  }
}, 60_000);

afterAll(() => dir?.remove());

/** The sockets a process listens on, from its file descriptors and the kernel's tables. */
function listening(pid: number): { ports: number[]; sockets: string[] } {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const row of rows) {
      const fields = row.trim().split(/\s+/);
      // st 0A is LISTEN; the inode is the tenth field.
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) {
        ports.push(Number.parseInt((fields[1] ?? '').split(':')[1] ?? '', 16));
      }
    }
  }
  const sockets: string[] = [];
  for (const row of readFileSync(`/proc/${pid}/net/unix`, 'utf8').trim().split('\n').slice(1)) {
    const fields = row.trim().split(/\s+/);
    // Flags 00010000 is a listening socket; the inode is the seventh field, the path the eighth.
    if (fields[3] === '00010000' && inodes.has(fields[6] ?? '') && fields[7]) sockets.push(fields[7]);
  }
  return { ports: ports.sort((a, b) => a - b), sockets: sockets.sort() };
}

/**
 * The private tree of the replay `pid` under `tmp`, once its plugin (written after the config, and after every
 * server is up) is there. The tool probe (probe.ts) makes a tree of its own, owned by the same process, with
 * a config but no plugin: that one is not the replay's.
 */
function privateTree(tmp: string, pid: number): { root: string; secret: string } | undefined {
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith('replay-opencode-')) continue;
    const root = join(tmp, name);
    try {
      if (readFileSync(join(root, 'owner.pid'), 'utf8').trim() !== String(pid)) continue;
      readFileSync(join(root, 'config', 'plugins', pluginFileName));
      const config = JSON.parse(readFileSync(join(root, 'config', 'opencode.json'), 'utf8')) as {
        provider: { replay: { options: { apiKey: string } } };
      };
      return { root, secret: config.provider.replay.options.apiKey };
    } catch {
      // Not written yet.
    }
  }
  return undefined;
}

async function waitFor<T>(what: string, find: () => T | undefined, alive: () => boolean): Promise<T> {
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (!alive()) throw new Error(`the replay ended before ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A slow upstream: every request waits until `open()`, then goes on to the scripted server as it came. While
 * it is shut, opencode cannot get its first answer, so it has made no tool call yet.
 */
async function slowUpstream(
  target: ModelServer,
): Promise<{ baseURL: string; open(): void; close(): Promise<void> }> {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void opened.then(() => {
        const onward = request(
          { host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        onward.on('error', () => res.destroy());
        onward.end(Buffer.concat(chunks));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Everything a stranger tries on one socket or port; every answer must be a refusal. */
async function intrude(to: number | string, secret: string): Promise<RawResponse[]> {
  const chat = JSON.stringify({
    model: 'scripted',
    stream: false,
    messages: [{ role: 'user', content: `${marker}: say something billed to the user` }],
    tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }],
  });
  const answer = JSON.stringify({ ...firstCall, callID: 'intruder', sessionID: 'intruder' });
  const attempts: { path: string; body: string; headers: Record<string, string>; expected: number }[] = [];
  for (const [path, body] of [
    ['/v1/chat/completions', chat],
    ['/answer', answer],
  ] as const) {
    attempts.push(
      { path, body, headers: {}, expected: 401 },
      // The placeholder key opencode had before the secret, and a guess.
      { path, body, headers: { authorization: 'Bearer sk-replay' }, expected: 401 },
      { path, body, headers: { authorization: `Bearer ${marker}` }, expected: 401 },
      // A DNS-rebinding page reaches the port under its own name; even holding the secret it is refused.
      {
        path,
        body,
        headers: {
          authorization: `Bearer ${secret}`,
          host: `rebound.example${typeof to === 'number' ? `:${to}` : ''}`,
        },
        expected: 421,
      },
    );
  }
  const responses: RawResponse[] = [];
  for (const attempt of attempts) {
    // A refusal comes at once; one let through would wait on the shut upstream.
    const response = await rawRequest({
      to,
      path: attempt.path,
      headers: attempt.headers,
      body: attempt.body,
      timeoutMs: 30_000,
    });
    expect(response.status, `${to} ${attempt.path} ${JSON.stringify(attempt.headers)}`).toBe(
      attempt.expected,
    );
    responses.push(response);
  }
  return responses;
}

/** The whole store as bytes, with its write-ahead log if one is left. */
function storeBytes(): string {
  return readdirSync(dir.path)
    .filter((name) => name.startsWith('store.db'))
    .map((name) => readFileSync(join(dir.path, name)).toString('latin1'))
    .join('');
}

const isTitle = (request: ChatRequest) =>
  contentText(request.messages?.[0]?.content).includes('You are a title generator');

describe('replay --agent opencode: the loopback servers answer only their own agent', () => {
  it('a scripted upstream: strangers get 401/421 on every listening socket, and nothing of it shows', async () => {
    const model = await startModelServer({
      models: ['scripted'],
      responders: [(request) => (isTitle(request) ? { text: 'Replayed title' } : undefined)],
    });
    const upstream = await slowUpstream(model);
    const tmp = join(dir.path, 'tmp-scripted');
    const ws = join(dir.path, 'ws-scripted');
    const out = join(dir.path, 'scripted.jsonl');
    for (const path of [tmp, ws]) mkdirSync(path, { recursive: true });
    try {
      model.push(...steps.flat());
      const child = execa(
        'node',
        [
          bin,
          'replay',
          sessionId,
          '--db',
          db,
          '--agent',
          'opencode',
          '--model',
          'openai:scripted',
          '--base-url',
          upstream.baseURL,
          '--workspace',
          ws,
          '--out',
          out,
          '--json',
        ],
        // TMPDIR: the private tree is made where this test can find it.
        { reject: false, env: { NO_COLOR: '1', TMPDIR: tmp, OPENAI_API_KEY: realKey }, extendEnv: true },
      );
      const pid = child.pid as number;
      let exited = false;
      void child.finally(() => {
        exited = true;
      });
      const tree = await waitFor(
        'its private tree',
        () => privateTree(tmp, pid),
        () => !exited,
      );
      const { secret } = tree;
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // Every server is up before the config is written: what the process listens on now is all of it.
      const found = listening(pid);
      // No TCP port at all: the proxy and the answer server are sockets in the private tree.
      expect(found.ports).toEqual([]);
      expect(found.sockets).toEqual([join(tree.root, 'answers.sock'), join(tree.root, 'proxy.sock')]);
      const refusals = [];
      for (const to of [...found.ports, ...found.sockets]) refusals.push(...(await intrude(to, secret)));
      // Until now opencode has had no answer, so it made no tool call before the stranger's.
      upstream.open();

      const result = await child;
      expect(result.exitCode, String(result.stderr)).toBe(0);
      const report = JSON.parse(String(result.stdout)) as {
        turnsDone: number;
        turnsFailed: number;
        misses: number;
      };
      expect(report).toMatchObject({ turnsDone: 3, turnsFailed: 0, misses: 0 });

      // No refusal said anything recorded.
      for (const refusal of refusals) {
        for (const recorded of results)
          if (recorded.output.length > 20) expect(refusal.body).not.toContain(recorded.output);
      }
      // The upstream never heard of the stranger, and got the real key, never the secret.
      expect(JSON.stringify(model.requests)).not.toContain(marker);
      expect(JSON.stringify(model.requests)).not.toContain(secret);
      const stepsAsked = model.chatRequests().filter((request) => request.body && !isTitle(request.body));
      expect(stepsAsked).toHaveLength(3);
      expect(new Set(model.requests.map((request) => request.headers.authorization))).toEqual(
        new Set([`Bearer ${realKey}`]),
      );
      // The agent got every recorded result, in order: the stranger's /answer took none of them.
      const last = stepsAsked.at(-1)?.body?.messages ?? [];
      const shown = last.filter((m) => m.role === 'tool').map((m) => contentText(m.content));
      expect(shown).toHaveLength(results.length);
      for (const [index, recorded] of results.entries()) {
        if (recorded.isError) expect(shown[index]).toContain(recorded.output.replace(/^Error: /, ''));
        else expect(shown[index]).toBe(recorded.output);
      }
      // The pairs: one per step, none of the stranger's.
      const pairsText = readFileSync(out, 'utf8');
      const pairs = pairsText
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as PairLine);
      expect(pairs.map((pair) => pair.turn)).toEqual(Array.from({ length: 3 }, (_, i) => i + 1));
      expect(pairsText).not.toContain(marker);
      expect(pairsText).not.toContain('intruder');

      // The secret is nowhere it could be read back from.
      expect(pairsText).not.toContain(secret);
      expect(storeBytes()).not.toContain(secret);
      expect(storeBytes()).not.toContain(marker);
      expect(String(result.stderr)).not.toContain(secret);
      expect(String(result.stdout)).not.toContain(secret);
      // And the private tree, with the sockets, is gone.
      expect(readdirSync(tmp).filter((name) => name.startsWith('replay-opencode-'))).toEqual([]);
    } finally {
      await upstream.close();
      await model.close();
    }
  }, 240_000);

  it('--model recorded, socket paths too long for sun_path: every server on a TCP port, each refuses strangers', async () => {
    // The private tree's sockets would be over 107 bytes: each server falls back to 127.0.0.1, gated the same.
    const tmp = join(dir.path, `tmp-recorded-${'x'.repeat(70)}`);
    const ws = join(dir.path, 'ws-recorded');
    const out = join(dir.path, 'recorded.jsonl');
    // A cache of its own, empty: the tool probe runs first in this process, as on a fresh machine (CI).
    const cache = join(dir.path, 'cache-recorded');
    for (const path of [tmp, ws, cache]) mkdirSync(path, { recursive: true });
    const child = execa(
      'node',
      [
        bin,
        'replay',
        sessionId,
        '--db',
        db,
        '--agent',
        'opencode',
        '--workspace',
        ws,
        '--out',
        out,
        '--json',
      ],
      { reject: false, env: { NO_COLOR: '1', TMPDIR: tmp, XDG_CACHE_HOME: cache }, extendEnv: true },
    );
    const pid = child.pid as number;
    let exited = false;
    void child.finally(() => {
      exited = true;
    });
    const tree = await waitFor(
      'its private tree',
      () => privateTree(tmp, pid),
      () => !exited,
    );
    expect(join(tree.root, 'answers.sock').length).toBeGreaterThan(107);
    const found = listening(pid);
    // The recorded model, the proxy, the answer server.
    expect(found.ports).toHaveLength(3);
    expect(found.sockets).toEqual([]);
    for (const to of found.ports) await intrude(to, tree.secret);

    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const report = JSON.parse(String(result.stdout)) as {
      turnsDone: number;
      turnsFailed: number;
      misses: number;
    };
    expect(report.turnsFailed).toBe(0);
    expect(report.misses).toBe(0);
    // Every recorded turn reached the agent in order: each pair is its original, calls and all.
    const pairsText = readFileSync(out, 'utf8');
    const pairs = pairsText
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as PairLine);
    expect(pairs.length).toBe(report.turnsDone);
    expect(pairs.length).toBeGreaterThanOrEqual(3);
    for (const pair of pairs) {
      expect(pair.completion.content ?? null).toBe(pair.original?.content ?? null);
      expect(pair.completion.tool_calls?.map((call) => call.function.name) ?? []).toEqual(
        pair.original?.tool_calls?.map((call) => call.function.name) ?? [],
      );
    }
    expect(pairsText).not.toContain(marker);
    expect(pairsText).not.toContain(tree.secret);
    expect(storeBytes()).not.toContain(tree.secret);
    expect(String(result.stderr)).not.toContain(tree.secret);
    expect(String(result.stdout)).not.toContain(tree.secret);
  }, 240_000);
});
