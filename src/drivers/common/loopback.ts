// The small HTTP servers a driver runs for its agent to talk to (opencode's answer server, recording proxy,
// recorded model, tool probe), and the one gate every request passes before any of them sees it. Another
// process on the machine (another user on a shared box, a web page in the user's browser posting to
// 127.0.0.1) must not be able to spend the user's model key, read recorded tool output or take a recorded
// result meant for the agent, so a server is only started here, with its gate, in this order:
//
// 1. `Host` must name the address we listen on (127.0.0.1:PORT, or `socketHost` over a Unix socket):
//    otherwise 421 Misdirected Request. A DNS-rebinding page reaches 127.0.0.1 under its own host name and
//    cannot present ours; 421 says "not this server" (RFC 9110 §15.5.20), which is the case, where 403 would
//    say the client lacks a permission it could have.
// 2. The per-run secret (`newSecret`, 256 bits), handed to the agent through the channel it already uses (a
//    provider API key, a plugin's config), compared in constant time: otherwise 401. It is then taken off the
//    request, so no handler can pass it on (the proxy forwards headers upstream).
// 3. Only the routes the server serves: 404 for another path, 405 (with Allow) for another method.
//
// Nothing of a refused request reaches the handler: its body is not read, it is not forwarded, answered or
// recorded. Where the agent can reach a Unix domain socket, the server listens on one (mode 0600, in the run's
// private 0700 tree) instead of a TCP port, and the gate stays.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync } from 'node:fs';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fresh secret for one run's servers: 32 random bytes, base64url (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * `text` with every occurrence of each secret replaced, for anything that may be printed or stored. A "key" of
 * under 8 characters (a local server's `none`) is no secret, and replacing it would garble the message.
 */
export function redact(text: string, ...secrets: (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 8) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * The host clients put in the URL when they talk over a Unix socket; it only becomes their `Host` header. Port 0,
 * which nothing can listen on: a client that ignored the socket would fail to connect rather than reach
 * whatever listens on localhost:80.
 */
export const socketHost = 'localhost:0';

/** What `Host` may say over a socket: Bun's fetch sends `localhost:0`, Node's http.request drops the port 0. */
const socketHosts = [socketHost, 'localhost'];

/**
 * Linux's `sun_path` holds 108 bytes with the terminating NUL. A longer path cannot be bound: the server
 * falls back to a TCP port (gated the same way).
 */
const maxSocketPath = 107;

/** Whether a Unix socket can be bound at `path` (its length fits `sun_path`). */
export function socketFits(path: string): boolean {
  return Buffer.byteLength(path) <= maxSocketPath;
}

export interface Route {
  method: string;
  /** Exact path; the query string is not part of it. */
  path: string;
  /** Every path that begins with `path` (the Gemini API names the model in it). */
  prefix?: boolean;
}

/** Where a request's secret is read: a header, with an optional scheme word before it (`Bearer`). */
export interface Credential {
  header: string;
  scheme?: string;
}

/** `Authorization: Bearer <secret>`: what OpenAI-compatible clients send as their API key. */
export const bearer: Credential = { header: 'authorization', scheme: 'Bearer' };

export interface LoopbackOptions {
  /** The secret every request must present (see `newSecret`). */
  secret: string;
  /** What the server serves; anything else is 404/405 (after the host and the secret were checked). */
  routes: readonly Route[];
  /** Where the secret is read; default `bearer`. */
  credential?: Credential;
  /** Listen on this Unix socket (made 0600) instead of a TCP port on 127.0.0.1. */
  socket?: string;
}

export interface Loopback {
  /** What clients put before a route's path: `http://127.0.0.1:PORT`, or `http://localhost:0` over the socket. */
  origin: string;
  /** The TCP port, when not on a socket. */
  port?: number;
  /** The socket's path, when on one. */
  socket?: string;
  /** Requests refused by the gate, by why. */
  refused: { host: number; secret: number; route: number };
  close(): Promise<void>;
}

/** Why a request was refused, or undefined when it may pass. */
function refusal(
  req: IncomingMessage,
  options: { hosts: readonly string[]; secret: string; routes: readonly Route[]; credential?: Credential },
): { status: 421 | 401 | 404 | 405; message: string; allow?: string } | undefined {
  if (!options.hosts.includes((req.headers.host ?? '').toLowerCase()))
    return { status: 421, message: 'replay-history: this server answers only requests addressed to it' };
  if (!presents(req, options.secret, options.credential ?? bearer))
    return { status: 401, message: 'replay-history: this server answers only the agent of its own run' };
  const path = (req.url ?? '').split('?')[0];
  const methods = options.routes
    .filter((route) => (route.prefix ? path?.startsWith(route.path) : route.path === path))
    .map((route) => route.method);
  if (methods.length === 0) return { status: 404, message: 'replay-history: no such path here' };
  if (!methods.includes(req.method ?? ''))
    return { status: 405, message: 'replay-history: method not allowed', allow: methods.join(', ') };
  return undefined;
}

/** Whether the request carries the secret. Both sides are hashed first: equal lengths, so constant time. */
function presents(req: IncomingMessage, secret: string, credential: Credential): boolean {
  const raw = req.headers[credential.header];
  if (typeof raw !== 'string') return false;
  let given = raw;
  if (credential.scheme) {
    const prefix = `${credential.scheme} `;
    if (raw.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()) return false;
    given = raw.slice(prefix.length);
  }
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}

/** Starts `handler` behind the gate, on a Unix socket or 127.0.0.1 on a free port. The caller must close() it. */
export async function serveLoopback(handler: RequestListener, options: LoopbackOptions): Promise<Loopback> {
  if (options.secret.length < 16) throw new Error('a loopback server needs a secret (see newSecret)');
  const refused = { host: 0, secret: 0, route: 0 };
  let hosts = socketHosts;
  const credential = options.credential ?? bearer;
  const server = createServer((req, res) => {
    const refuse = refusal(req, { hosts, secret: options.secret, routes: options.routes, credential });
    if (refuse) {
      refused[refuse.status === 421 ? 'host' : refuse.status === 401 ? 'secret' : 'route']++;
      // The body is never read; the connection is not kept for another try.
      res.setHeader('connection', 'close');
      if (refuse.allow) res.setHeader('allow', refuse.allow);
      if (refuse.status === 401 && credential.scheme) res.setHeader('www-authenticate', credential.scheme);
      sendJson(res, refuse.status, { error: { message: refuse.message, type: 'replay_refused' } });
      req.resume();
      return;
    }
    delete req.headers[credential.header];
    handler(req, res);
  });
  if (options.socket) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.socket, () => resolve());
    });
    // The directory is already private (0700); the socket is too, in case it is ever put elsewhere.
    chmodSync(options.socket, 0o600);
    return {
      origin: `http://${socketHost}`,
      socket: options.socket,
      refused,
      close: () => close(server),
    };
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  hosts = [`127.0.0.1:${port}`];
  return { origin: `http://127.0.0.1:${port}`, port, refused, close: () => close(server) };
}

/** Stops `server`, cutting keep-alive and in-flight connections rather than waiting on them. */
function close(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** A request's whole body; over `limit` bytes the request is destroyed and the promise rejects. */
export function readBody(req: IncomingMessage, limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Answers with `value` as JSON (with its length, so the client need not wait for the connection to close). */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
