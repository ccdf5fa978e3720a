// server.ts against a stand-in for `opencode serve` (a node script speaking the few routes the driver calls):
// the calls are the ones `opencode run` makes, in its order and with its bodies; permission asks are rejected;
// a prompt ends at idle; the server and its children are stopped by PID; a start that fails says why.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OpencodeServer, ServerStartError } from '../../../src/drivers/opencode/server.js';

const scratch = mkdtempSync(join(tmpdir(), 'opencode-server-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A stand-in server: logs every request (method, path, auth, directory, body) and a child's PID to `log`. */
function standIn(name: string, behaviour: 'serve' | 'exit' = 'serve'): { script: string; log: string } {
  const log = join(scratch, `${name}.log`);
  const script = join(scratch, `${name}.mjs`);
  writeFileSync(
    script,
    `import { createServer } from 'node:http';
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
const log = (entry) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(entry) + '\\n');
if (${JSON.stringify(behaviour)} === 'exit') { process.stderr.write('no config here\\n'); process.exit(3); }
const child = spawn('sleep', ['600'], { stdio: 'ignore' });
log({ child: child.pid, password: process.env.OPENCODE_SERVER_PASSWORD });
const streams = new Set();
const send = (event) => { for (const res of streams) res.write('data: ' + JSON.stringify(event) + '\\n\\n'); };
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    log({ method: req.method, path: req.url, auth: req.headers.authorization, directory: req.headers['x-opencode-directory'], body: body ? JSON.parse(body) : undefined });
    if (req.url === '/event') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"server.connected","properties":{}}\\n\\n');
      streams.add(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url === '/config') return res.end('{}');
    if (req.url === '/session') return res.end(JSON.stringify({ id: 'ses_1' }));
    if (req.url.startsWith('/permission/')) return res.end('true');
    if (req.url === '/session/ses_1/message') {
      const sessionID = 'ses_1';
      send({ type: 'session.status', properties: { sessionID, status: { type: 'busy' } } });
      send({ type: 'permission.asked', properties: { id: 'per_1', sessionID, permission: 'doom_loop', patterns: ['*'] } });
      setTimeout(() => {
        if (body.includes('fail')) send({ type: 'session.error', properties: { sessionID, error: { name: 'APIError', data: { message: 'scripted' } } } });
        res.end('{}');
        setTimeout(() => send({ type: 'session.status', properties: { sessionID, status: { type: 'idle' } } }), 50);
      }, 50);
      return;
    }
    res.end('{}');
  });
});
server.listen(0, '127.0.0.1', () => console.log('opencode server listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`,
  );
  return { script, log };
}

const entries = (log: string): Record<string, unknown>[] =>
  readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const options = (script: string) => ({
  argv: [process.execPath, script],
  cwd: scratch,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  directory: '/work space/ü',
  password: 'pw-of-this-session',
  startTimeoutMs: 20_000,
});

describe('OpencodeServer', () => {
  it("makes `opencode run`'s calls, rejects permission asks, ends a prompt at idle, and stops its tree by PID", async () => {
    const { script, log } = standIn('serve');
    const server = await OpencodeServer.start(options(script));
    const image = join(scratch, 'prompt-1-1.png');
    const first = await server.prompt({
      title: 'The title',
      text: 'fix "it"\nplease',
      files: [image],
      model: { providerID: 'replay', modelID: 'scripted/x' },
      timeoutMs: 20_000,
    });
    expect(first).toEqual({ sessionID: 'ses_1', errors: [] });
    const second = await server.prompt({
      sessionID: 'ses_1',
      text: 'now fail',
      model: { providerID: 'replay', modelID: 'scripted/x' },
      timeoutMs: 20_000,
    });
    expect(second).toEqual({
      sessionID: 'ses_1',
      errors: [{ name: 'APIError', data: { message: 'scripted' } }],
    });
    const [started, ...requests] = entries(log);
    expect(started?.password).toBe('pw-of-this-session');
    const auth = `Basic ${Buffer.from('opencode:pw-of-this-session').toString('base64')}`;
    for (const request of requests) {
      expect(request.auth).toBe(auth);
      expect(request.directory).toBe(encodeURIComponent('/work space/ü'));
    }
    const calls = requests.map((request) => `${request.method} ${request.path}`);
    expect(calls.slice(0, 3)).toEqual(['GET /event', 'GET /config', 'POST /session']);
    expect(calls.filter((call) => call === 'POST /session/ses_1/message')).toHaveLength(2);
    expect(calls.filter((call) => call === 'POST /permission/per_1/reply')).toHaveLength(2);
    expect(calls.filter((call) => call === 'POST /session')).toHaveLength(1);
    expect(requests.find((request) => request.path === '/session')?.body).toEqual({
      title: 'The title',
      permission: [
        { permission: 'question', action: 'deny', pattern: '*' },
        { permission: 'plan_enter', action: 'deny', pattern: '*' },
        { permission: 'plan_exit', action: 'deny', pattern: '*' },
      ],
    });
    const prompts = requests.filter((request) => request.path === '/session/ses_1/message');
    expect(prompts[0]?.body).toEqual({
      model: { providerID: 'replay', modelID: 'scripted/x' },
      parts: [
        { type: 'file', url: `file://${image}`, filename: 'prompt-1-1.png', mime: 'text/plain' },
        { type: 'text', text: 'fix "it"\nplease' },
      ],
    });
    expect(requests.find((request) => request.path === '/permission/per_1/reply')?.body).toEqual({
      reply: 'reject',
    });

    const child = started?.child as number;
    expect(alive(server.pid) && alive(child)).toBe(true);
    await server.close();
    expect(alive(server.pid)).toBe(false);
    expect(alive(child)).toBe(false);
  });

  it('a prompt that outlives its time, and one to a server that is gone, say so', async () => {
    const { script, log } = standIn('slow');
    const server = await OpencodeServer.start(options(script));
    try {
      // The stand-in never goes idle for another session.
      const slow = await server.prompt({
        sessionID: 'ses_other',
        text: 'hello',
        model: { providerID: 'replay', modelID: 'm' },
        timeoutMs: 500,
      });
      expect(slow.failure).toEqual({ kind: 'timeout' });
      process.kill(server.pid, 'SIGKILL');
      const gone = await server.prompt({
        sessionID: 'ses_1',
        text: 'hello',
        model: { providerID: 'replay', modelID: 'm' },
        timeoutMs: 5_000,
      });
      expect(gone.failure).toEqual({ kind: 'exited', code: null, signal: 'SIGKILL' });
    } finally {
      await server.close();
      // Its child outlived a SIGKILL of its parent (nothing of ours ran it): stopped here by its PID.
      const child = entries(log)[0]?.child as number;
      if (alive(child)) process.kill(child, 'SIGKILL');
    }
  });

  it('a server that exits before it listens: the start fails with its exit and stderr', async () => {
    const { script } = standIn('exit', 'exit');
    const error = await OpencodeServer.start(options(script)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerStartError);
    expect((error as Error).message).toMatch(/exited with 3 before it listened\nno config here/);
  });
});
