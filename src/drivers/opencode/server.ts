// One opencode per session: a long-lived `opencode serve` (its own private environment, cwd = the workspace)
// that takes every prompt of the session over its HTTP API, as `opencode run` does in-process (run builds an SDK
// client on the server's own `fetch`: the calls below are the ones it makes). Start-up (~4-5 s: the binary, the
// config, the plugin, the database) is paid once per session instead of once per prompt.
//
// The server listens on 127.0.0.1 only (it cannot take a Unix socket) behind opencode's own basic auth: a fresh
// password per session, which only this process holds. Its API can do more than prompt (a shell route, PTYs),
// so a request without the password is refused (401) before it is routed; this process calls only the routes
// `opencode run` calls. The server is stopped by its PID (and every descendant's) when the session ends, and
// runs under the watchdog, so a replay-history killed by SIGKILL leaves no server behind.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The env var opencode takes its server's password from (basic auth, user `opencode`). */
export const serverPasswordEnv = 'OPENCODE_SERVER_PASSWORD';

/** What `opencode run` denies every session it creates (so `question` is not offered, as in a run). */
export const runPermissions = [
  { permission: 'question', action: 'deny', pattern: '*' },
  { permission: 'plan_enter', action: 'deny', pattern: '*' },
  { permission: 'plan_exit', action: 'deny', pattern: '*' },
] as const;

export interface ServerOptions {
  /** The whole command line (`opencode serve --hostname 127.0.0.1 --port 0`, wrapped as the driver wraps it). */
  argv: readonly string[];
  cwd: string;
  /** opencode's whole environment (the password is added here). */
  env: Record<string, string>;
  /** The directory the server's instance is for (sent with every request, as `opencode run` sends it). */
  directory: string;
  password: string;
  /** How long start-up may take before the server is given up (ms). */
  startTimeoutMs: number;
}

export interface PromptInput {
  /** The session to continue; none: one is created (with `title`, and `opencode run`'s permissions). */
  sessionID?: string;
  title?: string;
  text: string;
  /** Attachments, as paths (written in the private tree): sent as `opencode run --file` sends them. */
  files?: readonly string[];
  model: { providerID: string; modelID: string };
  timeoutMs: number;
}

export interface PromptOutcome {
  sessionID?: string;
  /** The session's `session.error` events while it ran (what `opencode run --format json` prints as errors). */
  errors: unknown[];
  /** Why the prompt did not complete: opencode exited, the time ran out, or the API refused the call. */
  failure?:
    | { kind: 'exited'; code: number | null; signal: string | null }
    | { kind: 'timeout' }
    | { kind: 'api'; detail: string };
}

export class ServerStartError extends Error {}

interface Exit {
  code: number | null;
  signal: string | null;
}

type Event = { type?: string; properties?: Record<string, unknown> };

/** The PIDs under `root` (children first found, then theirs), from /proc. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  let names: string[] = [];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(pids: readonly number[], name: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  }
}

export class OpencodeServer {
  readonly url: string;
  readonly pid: number;
  private readonly child: ChildProcess;
  private readonly headers: Record<string, string>;
  private readonly exit: Promise<Exit>;
  private exited: Exit | undefined;
  private stderr = '';
  private readonly events = new AbortController();
  private readonly listeners = new Set<(event: Event) => void>();

  private constructor(child: ChildProcess, url: string, options: ServerOptions, exit: Promise<Exit>) {
    this.child = child;
    this.pid = child.pid as number;
    this.url = url;
    this.exit = exit;
    void exit.then((value) => {
      this.exited = value;
    });
    this.headers = {
      authorization: `Basic ${Buffer.from(`opencode:${options.password}`).toString('base64')}`,
      'x-opencode-directory': encodeURIComponent(options.directory),
    };
  }

  /** Starts the server and waits until it listens (and its event stream is open). */
  static async start(options: ServerOptions): Promise<OpencodeServer> {
    const [command, ...args] = options.argv;
    const child = spawn(command as string, args, {
      cwd: options.cwd,
      env: { ...options.env, [serverPasswordEnv]: options.password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const keep = (chunk: Buffer): void => {
      stderr = (stderr + chunk.toString('utf8')).slice(-16_384);
    };
    child.stderr?.on('data', keep);
    const exit = new Promise<Exit>((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
      child.on('error', () => resolve({ code: null, signal: null }));
    });
    let stdout = '';
    const url = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), options.startTimeoutMs);
      child.stdout?.on('data', (chunk: Buffer) => {
        if (stdout.length < 65_536) stdout += chunk.toString('utf8');
        const found = /opencode server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      });
      void exit.then(() => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    if (!url) {
      const done = await Promise.race([exit, after(0)]);
      const server = new OpencodeServer(child, 'http://127.0.0.1:0', options, exit);
      server.stderr = stderr;
      await server.close();
      const tail = server.stderrTail();
      throw new ServerStartError(
        done
          ? `opencode serve exited with ${done.code ?? done.signal} before it listened${tail ? `\n${tail}` : ''}`
          : `opencode serve did not listen within ${Math.round(options.startTimeoutMs / 1000)} s${tail ? `\n${tail}` : ''}`,
      );
    }
    const server = new OpencodeServer(child, url, options, exit);
    child.stderr?.off('data', keep);
    server.stderr = stderr;
    child.stderr?.on('data', (chunk: Buffer) => {
      server.stderr = (server.stderr + chunk.toString('utf8')).slice(-16_384);
    });
    // Drained, so a chatty server never blocks on a full pipe.
    child.stdout?.resume();
    try {
      await server.subscribe();
      // What `opencode run` asks first (for its share setting): it loads the instance, and with it the plugin.
      await server.call('GET', '/config');
    } catch (error) {
      await server.close();
      throw new ServerStartError(
        `opencode serve listens but does not answer: ${(error as Error).message}${server.stderrTail() ? `\n${server.stderrTail()}` : ''}`,
      );
    }
    return server;
  }

  /** The last lines opencode wrote to stderr. */
  stderrTail(lines = 5): string {
    return this.stderr.trim().split('\n').slice(-lines).join('\n');
  }

  /** Set once the process has exited. */
  get exitStatus(): Exit | undefined {
    return this.exited;
  }

  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { ...this.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${method} ${path}: HTTP ${response.status}${text ? `: ${text.slice(0, 2000)}` : ''}`);
    try {
      return text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      return text;
    }
  }

  /** The instance's event stream (opened before any prompt, as `opencode run` opens it), for the server's life. */
  private async subscribe(): Promise<void> {
    const response = await fetch(`${this.url}/event`, {
      headers: this.headers,
      signal: this.events.signal,
    });
    if (!response.ok || !response.body) throw new Error(`GET /event: HTTP ${response.status}`);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    void (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (!data) continue;
          let event: Event;
          try {
            event = JSON.parse(data) as Event;
          } catch {
            continue;
          }
          this.dispatch(event);
        }
      }
    })().catch(() => {
      // Closed (the server stopped, or we did): prompts waiting find the exit.
    });
  }

  private dispatch(event: Event): void {
    // Headless, nobody can say yes: `opencode run` rejects every permission asked (e.g. a repeated call).
    if (event.type === 'permission.asked') {
      const id = event.properties?.id;
      if (typeof id === 'string')
        void this.call('POST', `/permission/${encodeURIComponent(id)}/reply`, { reply: 'reject' }).catch(
          () => {},
        );
    }
    for (const listener of this.listeners) listener(event);
  }

  /** One prompt, answered in full: the call `opencode run` makes, then its wait for the session to be idle. */
  async prompt(input: PromptInput): Promise<PromptOutcome> {
    const errors: unknown[] = [];
    let sessionID = input.sessionID;
    let idle: () => void = () => {};
    const idled = new Promise<void>((resolve) => {
      idle = resolve;
    });
    let sent = false;
    const listener = (event: Event): void => {
      const properties = event.properties ?? {};
      if (!sessionID || properties.sessionID !== sessionID) return;
      if (event.type === 'session.error' && properties.error) errors.push(properties.error);
      const status = properties.status as { type?: string } | undefined;
      if (sent && event.type === 'session.status' && status?.type === 'idle') idle();
    };
    this.listeners.add(listener);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), input.timeoutMs);
    });
    const work = (async (): Promise<'done' | { api: string }> => {
      try {
        if (!sessionID) {
          const created = (await this.call('POST', '/session', {
            ...(input.title !== undefined ? { title: input.title } : {}),
            permission: runPermissions,
          })) as { id?: unknown } | undefined;
          if (typeof created?.id !== 'string') return { api: 'POST /session gave no session id' };
          sessionID = created.id;
        }
        const files = (input.files ?? []).map((path) => ({
          type: 'file',
          url: pathToFileURL(path).href,
          filename: basename(path),
          mime: 'text/plain',
        }));
        sent = true;
        await this.call('POST', `/session/${encodeURIComponent(sessionID)}/message`, {
          model: input.model,
          parts: [...files, { type: 'text', text: input.text }],
        });
        await idled;
        return 'done';
      } catch (error) {
        return { api: (error as Error).message };
      }
    })();
    try {
      const first = await Promise.race([work, timedOut, this.exit]);
      const outcome: PromptOutcome = { ...(sessionID ? { sessionID } : {}), errors };
      if (first === 'done') return outcome;
      if (first === 'timeout') return { ...outcome, failure: { kind: 'timeout' } };
      if ('api' in first) {
        // A call that failed because the process is gone says so.
        const gone = await Promise.race([this.exit, after(200)]);
        if (gone) return { ...outcome, failure: { kind: 'exited', ...gone } };
        return { ...outcome, failure: { kind: 'api', detail: first.api } };
      }
      return { ...outcome, failure: { kind: 'exited', ...first } };
    } finally {
      clearTimeout(timer);
      this.listeners.delete(listener);
    }
  }

  /**
   * Stops the server: TERM to the process and every descendant (by PID), KILL to any of them left after 2 s.
   * Resolves once the process has exited.
   */
  async close(): Promise<void> {
    this.events.abort();
    const tree = [this.pid, ...descendants(this.pid)];
    if (!this.exited) signal(tree, 'SIGTERM');
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline && (!this.exited || tree.some(isAlive)))
      await new Promise((resolve) => setTimeout(resolve, 50));
    if (!this.exited) tree.push(...descendants(this.pid));
    signal(tree.filter(isAlive), 'SIGKILL');
    await this.exit;
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }
}

/** Resolves to undefined after `ms`. */
function after(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
