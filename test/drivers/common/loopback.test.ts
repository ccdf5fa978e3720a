// The gate every driver's loopback server stands behind: the Host must be ours, the request must carry the
// run's secret, and only the served routes answer. A refused request never reaches the handler (its body is not
// even read), and the secret is off the request before the handler sees it.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Loopback,
  newSecret,
  readBody,
  redact,
  sendJson,
  serveLoopback,
  socketFits,
} from '../../../src/drivers/common/loopback.js';
import { hostOf, rawRequest } from '../opencode/raw-request.js';

const scratch = mkdtempSync(join(tmpdir(), 'loopback-'));
const servers: Loopback[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A server that echoes what reached its handler, and keeps each request it saw. */
async function echo(options: { socket?: string; credential?: { header: string; scheme?: string } } = {}) {
  const secret = newSecret();
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const server = await serveLoopback(
    (req, res) => {
      readBody(req).then((body) => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: body.toString('utf8'),
        });
        sendJson(res, 200, { ok: true });
      });
    },
    {
      secret,
      routes: [
        { method: 'POST', path: '/answer' },
        { method: 'GET', path: '/answer' },
        { method: 'POST', path: '/v1/chat/completions' },
      ],
      ...options,
    },
  );
  servers.push(server);
  const to = server.socket ?? (server.port as number);
  return { server, secret, seen, to };
}

describe('newSecret', () => {
  it('makes 256 random bits each time, as base64url', () => {
    const secrets = new Set(Array.from({ length: 100 }, () => newSecret()));
    expect(secrets.size).toBe(100);
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
    }
  });
});

describe('redact', () => {
  it('takes every occurrence of each secret out, and leaves text without one alone', () => {
    expect(redact('key s3cret-01 and s3cret-01, real sk-x-0123', 's3cret-01', 'sk-x-0123')).toBe(
      'key [redacted] and [redacted], real [redacted]',
    );
    expect(redact('nothing here', 's3cret', undefined)).toBe('nothing here');
    // A short "key" is no secret: 'none' stays in "no connection".
    expect(redact('none: no connection', 'none')).toBe('none: no connection');
  });
});

describe.each([
  ['a TCP port on 127.0.0.1', false],
  ['a Unix socket', true],
])('serveLoopback on %s', (_, onSocket) => {
  const start = () => echo(onSocket ? { socket: join(mkdtempSync(join(scratch, 's-')), 'server.sock') } : {});

  it('answers a request with the secret and our Host, and hands it on without the secret', async () => {
    const { secret, seen, to } = await start();
    const response = await rawRequest({
      to,
      path: '/answer?x=1',
      headers: { authorization: `Bearer ${secret}` },
      body: '{"tool":"read"}',
    });
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/answer?x=1', body: '{"tool":"read"}' });
    expect(seen[0]?.headers.host).toBe(hostOf(to));
    // Taken off: a handler that forwards headers (the proxy) cannot pass it on.
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen[0])).not.toContain(secret);
  });

  it('refuses a request without the secret, or with a wrong one, with 401; the handler never sees it', async () => {
    const { server, secret, seen, to } = await start();
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer sk-replay' },
      { authorization: `Bearer ${secret}x` },
      { authorization: `Bearer ${secret.slice(0, -1)}` },
      { authorization: secret },
      { authorization: `Basic ${secret}` },
      { 'x-api-key': secret },
    ];
    for (const headers of attempts) {
      const response = await rawRequest({ to, path: '/answer', headers, body: '{"tool":"read"}' });
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(JSON.parse(response.body)).toEqual({
        error: {
          message: 'replay-history: this server answers only the agent of its own run',
          type: 'replay_refused',
        },
      });
    }
    // Unknown paths too: a stranger learns nothing of the routes.
    expect((await rawRequest({ to, path: '/other', method: 'GET' })).status).toBe(401);
    expect(seen).toEqual([]);
    expect(server.refused).toEqual({ host: 0, secret: attempts.length + 1, route: 0 });
    // The scheme word is matched as HTTP says, in any case.
    expect(
      (await rawRequest({ to, path: '/answer', headers: { authorization: `bearer ${secret}` } })).status,
    ).toBe(200);
  });

  it('refuses a foreign Host with 421, even with the secret (a DNS-rebinding page)', async () => {
    const { server, secret, seen, to } = await start();
    const port = typeof to === 'number' ? to : 80;
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      `localhost.evil.example`,
      `127.0.0.1:${port + 1}`,
    ]) {
      const response = await rawRequest({
        to,
        path: '/answer',
        headers: { host, authorization: `Bearer ${secret}` },
        body: '{}',
      });
      expect(response.status, host).toBe(421);
      expect(JSON.parse(response.body).error.message).toBe(
        'replay-history: this server answers only requests addressed to it',
      );
    }
    expect(seen).toEqual([]);
    expect(server.refused.host).toBe(4);
    // The Host is compared without regard to case, as host names are.
    const upper = await rawRequest({
      to,
      path: '/answer',
      headers: { host: hostOf(to).toUpperCase(), authorization: `Bearer ${secret}` },
    });
    expect(upper.status).toBe(200);
  });

  it('answers only its routes: 404 for another path, 405 with Allow for another method', async () => {
    const { server, secret, seen, to } = await start();
    const authorization = `Bearer ${secret}`;
    for (const path of ['/', '/answers', '/answer/', '/v1/models', 'http://127.0.0.1/answer']) {
      expect((await rawRequest({ to, path, headers: { authorization }, body: '{}' })).status, path).toBe(404);
    }
    const put = await rawRequest({ to, method: 'PUT', path: '/answer', headers: { authorization } });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('POST, GET');
    const get = await rawRequest({
      to,
      method: 'GET',
      path: '/v1/chat/completions',
      headers: { authorization },
    });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(seen).toEqual([]);
    expect(server.refused).toEqual({ host: 0, secret: 0, route: 7 });
  });
});

describe('serveLoopback', () => {
  it('makes its socket readable by this user only, and says where it listens', async () => {
    const dir = mkdtempSync(join(scratch, 'mode-'));
    const socket = join(dir, 'answers.sock');
    const { server } = await echo({ socket });
    expect(server.socket).toBe(socket);
    expect(server.port).toBeUndefined();
    expect(server.origin).toBe('http://localhost:0');
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    const tcp = await echo();
    expect(tcp.server.origin).toBe(`http://127.0.0.1:${tcp.server.port}`);
    expect(tcp.server.socket).toBeUndefined();
  });

  it("takes over a socket the Host each client sends (Bun's localhost:0, Node's localhost), over TCP only 127.0.0.1:PORT", async () => {
    const onSocket = await echo({ socket: join(mkdtempSync(join(scratch, 'hosts-')), 'server.sock') });
    const tcp = await echo();
    const ask = (to: number | string, secret: string, host: string) =>
      rawRequest({ to, path: '/answer', headers: { host, authorization: `Bearer ${secret}` } }).then(
        (r) => r.status,
      );
    expect(await ask(onSocket.to, onSocket.secret, 'localhost:0')).toBe(200);
    expect(await ask(onSocket.to, onSocket.secret, 'localhost')).toBe(200);
    expect(await ask(onSocket.to, onSocket.secret, '127.0.0.1')).toBe(421);
    const port = tcp.server.port as number;
    expect(await ask(tcp.to, tcp.secret, `127.0.0.1:${port}`)).toBe(200);
    // Names we never hand out: a rebinding page could pick any of them.
    for (const host of [`localhost:${port}`, 'localhost:0', 'localhost', '127.0.0.1', `[::1]:${port}`])
      expect(await ask(tcp.to, tcp.secret, host), host).toBe(421);
  });

  it('reads the secret from the header a driver names (e.g. x-api-key)', async () => {
    const { secret, seen, to } = await echo({ credential: { header: 'x-api-key' } });
    expect(
      (await rawRequest({ to, path: '/answer', headers: { authorization: `Bearer ${secret}` } })).status,
    ).toBe(401);
    expect((await rawRequest({ to, path: '/answer', headers: { 'x-api-key': secret } })).status).toBe(200);
    expect(seen[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('will not start without a secret', async () => {
    await expect(serveLoopback(() => {}, { secret: '', routes: [] })).rejects.toThrow('needs a secret');
  });

  it('tells a socket path that cannot be bound (over 107 bytes) from one that can', () => {
    expect(socketFits(join(tmpdir(), 'replay-opencode-abcdef', 'answers.sock'))).toBe(true);
    expect(socketFits(`/${'d'.repeat(106)}`)).toBe(true);
    expect(socketFits(`/${'d'.repeat(107)}`)).toBe(false);
  });
});
