// One opencode per session: the driver starts `opencode serve` once and sends it every prompt. These tests
// count the opencode processes a session starts (through a wrapper binary that logs each start), compare the
// pairs with what `opencode run`, one process per prompt, sends the model for the same session, and check that
// the server is gone after the replay: when it ends well, when a turn fails mid-session, and when the replay is
// killed, before the plugin is loaded or after. And that the server refuses whoever lacks its password.
import { chmodSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { newSecret } from '../../src/drivers/common/loopback.js';
import { rebase } from '../../src/drivers/common/prompts.js';
import { startAnswerServer } from '../../src/drivers/opencode/answers.js';
import { prepareEnvironment } from '../../src/drivers/opencode/environment.js';
import { shortCircuitOf } from '../../src/replay/engine.js';
import { openDb } from '../../src/store/db.js';
import { SessionStore } from '../../src/store/sessions.js';
import { bin, run } from '../helpers/cli.js';
import { type ScriptedReply, startModelServer } from '../helpers/model-server.js';
import { opencodeBinary, opencodeRun } from '../helpers/opencode.js';
import {
  alive,
  db,
  dir,
  mainId,
  readPairs,
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
import { prompts, titles } from '../helpers/opencode-scenario.js';

useSample('opencode-server-');

/** An opencode that logs each start (`<subcommand> <pid> <cwd>`) to `log`, then is the real one (exec: same PID). */
function counted(name: string): {
  binary: string;
  starts: (ws: string) => { command: string; pid: number }[];
} {
  const binary = join(dir.path, `opencode-${name}`);
  const log = join(dir.path, `opencode-${name}.log`);
  writeFileSync(log, '');
  writeFileSync(binary, `#!/bin/sh\necho "$1 $$ $PWD" >> ${log}\nexec ${opencodeBinary()} "$@"\n`);
  chmodSync(binary, 0o755);
  return {
    binary,
    // The starts in the workspace: the tool probe (a plain `opencode run`, once per binary) runs elsewhere.
    starts: (ws) =>
      readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' '))
        .filter((fields) => fields.slice(2).join(' ') === ws && fields[0] !== '--version')
        .map((fields) => ({ command: fields[0] ?? '', pid: Number(fields[1]) })),
  };
}

/** The TCP ports a process listens on. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const row of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1)) {
      const fields = row.trim().split(/\s+/);
      if (fields[3] === '0A' && inodes.has(fields[9] ?? ''))
        ports.push(Number.parseInt((fields[1] ?? '').split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

async function until(what: string, test: () => boolean, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('replay --agent opencode: one opencode per session', () => {
  it('a three-prompt session starts opencode once, and its pairs are what `opencode run` per prompt sends', async () => {
    const ws = workspace('ws-once');
    const before = snapshot(ws);

    // The reference: `opencode run`, one process per prompt, continued with --session, with the same plugin
    // answering from the same recording, and the scripted model asked directly.
    const reference = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const handle = openDb(db);
    const loaded = new SessionStore(handle).load(mainId);
    handle.close();
    if (!loaded) throw new Error('no main session');
    const { session } = loaded;
    const circuit = shortCircuitOf(session);
    const secret = newSecret();
    const answers = await startAnswerServer(
      { answer: (tool, args) => circuit.answer(tool, rebase(args, ws, session.cwd ?? ws)) },
      { secret, details: (result) => result.display ?? {} },
    );
    const home = prepareEnvironment({
      workspace: ws,
      baseURL: reference.baseURL,
      model: 'scripted',
      answers: { url: answers.url, secret },
    });
    const runHome = {
      root: home.root,
      project: ws,
      dataDir: home.dataDir,
      env: home.env,
      remove: home.cleanup,
    };
    try {
      reference.push(...steps.flat());
      let sessionId: string | undefined;
      for (const text of [prompts.fix, prompts.changelog, prompts.thanks]) {
        const ran = await opencodeRun(runHome, text, {
          ...(sessionId ? { session: sessionId } : {}),
          extraArgs: ['--model', 'replay/scripted', ...(sessionId ? [] : ['--title', titles.fix])],
          timeoutMs: 120_000,
        });
        expect(ran.exitCode, ran.stderr).toBe(0);
        sessionId ??= ran.sessionId;
      }
    } finally {
      home.cleanup();
      await answers.close();
      await reference.close();
    }
    const sent = stepRequests(reference);
    expect(sent).toHaveLength(steps.flat().length);

    // The driver: one `opencode serve` for the whole session.
    const opencode = counted('once');
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const out = join(dir.path, 'once.jsonl');
    try {
      server.push(...steps.flat());
      const result = await run([...scripted(server, ws, out), '--opencode-bin', opencode.binary, '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ turnsDone: sent.length, turnsFailed: 0, misses: 0 });
    } finally {
      await server.close();
    }
    const starts = opencode.starts(ws);
    expect(starts.map((start) => start.command)).toEqual(['serve']);
    expect(alive(starts[0]?.pid as number)).toBe(false);

    // Pair by pair, what opencode sent the model is what the per-prompt runs sent it: messages and tools.
    const pairs = readPairs(out);
    expect(pairs).toHaveLength(sent.length);
    expect(pairs.map((pair) => pair.messages)).toEqual(sent.map((request) => request.body?.messages));
    expect(pairs.map((pair) => JSON.stringify(pair.tools))).toEqual(
      sent.map((request) => JSON.stringify(request.body?.tools)),
    );
    expect(snapshot(ws)).toEqual(before);
  }, 600_000);

  it('a turn failing mid-session: the turns before it are whole pairs, and the server is gone', async () => {
    const ws = workspace('ws-fails');
    const opencode = counted('fails');
    const refusal = { error: { status: 400, message: 'scripted: no more' } };
    const server = await startModelServer({
      models: ['scripted'],
      responders: [titleResponder],
      exhausted: refusal,
    });
    const out = join(dir.path, 'fails.jsonl');
    try {
      // The first prompt is answered; the second prompt's first step is refused (400: opencode does not retry).
      const first = steps[0] ?? [];
      server.push(...first, refusal);
      const result = await run([...scripted(server, ws, out), '--opencode-bin', opencode.binary, '--json']);
      expect(result.exitCode).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`turn ${first.length + 1} failed: HTTP 400: .*scripted: no more`),
      );
      expect(JSON.parse(result.stdout)).toMatchObject({ turnsDone: first.length, turnsFailed: 1 });
      expect(readPairs(out).map((pair) => pair.turn)).toEqual(first.map((_, i) => i + 1));
    } finally {
      await server.close();
    }
    const starts = opencode.starts(ws);
    expect(starts.map((start) => start.command)).toEqual(['serve']);
    expect(alive(starts[0]?.pid as number)).toBe(false);
  }, 300_000);

  it('refuses a stranger (no password, a wrong one) on its port; the replay killed, the server goes', async () => {
    const ws = workspace('ws-stranger');
    const opencode = counted('stranger');
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    const before = snapshot(ws);
    try {
      // The first step waits long after the kill: the server is up and mid-prompt when it is tried.
      const first = shortSteps[0] ?? [];
      server.push({ ...(first[0] as ScriptedReply), delayMs: 60_000 });
      const child = execa(
        'node',
        [
          bin,
          ...scripted(server, ws, join(dir.path, 'stranger.jsonl'), shortId),
          '--opencode-bin',
          opencode.binary,
        ],
        { reject: false },
      );
      await until('the first step', () => stepRequests(server).length >= 1);
      const [start] = opencode.starts(ws);
      expect(start?.command).toBe('serve');
      const pid = start?.pid as number;
      const ports = listeningPorts(pid);
      expect(ports.length).toBeGreaterThan(0);
      for (const port of ports) {
        for (const authorization of [
          undefined,
          `Basic ${Buffer.from('opencode:guess').toString('base64')}`,
        ]) {
          for (const [method, path] of [
            ['GET', '/session'],
            ['POST', '/session'],
            ['POST', '/session/any/shell'],
            ['GET', '/config'],
          ] as const) {
            const response = await fetch(`http://127.0.0.1:${port}${path}`, {
              method,
              headers: {
                ...(authorization ? { authorization } : {}),
                ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
              },
              ...(method === 'POST'
                ? { body: JSON.stringify({ command: 'touch intruder', agent: 'build' }) }
                : {}),
            });
            expect(response.status, `${method} ${path} ${authorization ?? 'no password'}`).toBe(401);
          }
        }
      }
      child.kill('SIGKILL');
      await child;
      await until('the server to stop', () => !alive(pid), 15_000);
      expect(snapshot(ws)).toEqual(before);
    } finally {
      await server.close();
    }
  }, 300_000);

  it('the replay killed before the plugin is loaded: the watchdog stops the server', async () => {
    const ws = workspace('ws-early');
    const opencode = counted('early');
    const server = await startModelServer({ models: ['scripted'], responders: [titleResponder] });
    try {
      server.push(...shortSteps.flat());
      const child = execa(
        'node',
        [
          bin,
          ...scripted(server, ws, join(dir.path, 'early.jsonl'), shortId),
          '--opencode-bin',
          opencode.binary,
        ],
        { reject: false },
      );
      // Killed as soon as the server is started: before it listens, long before it has loaded the plugin.
      await until('the server start', () => opencode.starts(ws).length > 0);
      child.kill('SIGKILL');
      await child;
      const pid = opencode.starts(ws)[0]?.pid as number;
      await until('the server to stop', () => !alive(pid), 15_000);
      expect(stepRequests(server)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 300_000);
});
