// Proof that an agent of the Gemini CLI lineage (Qwen Code, Gemini CLI) has its deny hook live, before any
// recorded session is replayed through it. Both run the tool when a hook fails and a setting can switch hooks
// off, so nothing is taken on trust: a run of this binary with the replay's own settings, env and flags, in a
// scratch workspace, against a loopback model of ours that asks for one harmless command (`touch` of a marker in
// that workspace). The hook is live when the agent sends the call's result back under our id saying exactly what
// our hook said, and the marker was not made; anything else and the replay refuses. The answer is cached per
// binary (path, size, mtime, version) and settings digest: the probe costs one start-up. What differs — the wire
// the loopback model speaks, the environment, the text the result must carry — is the agent's (`ProbeWire`).
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ChatMessage } from '../../replay/chat.js';
import type { HeadlessEnvironment } from './headless.js';
import { type Credential, newSecret, type Route, readBody, serveLoopback } from './loopback.js';
import { cacheFileOf, probeKey, readProbeCache, rememberProbe } from './probe-cache.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

export class HookNotLive extends Error {}

export interface ProbeOptions {
  binary: string;
  version?: string;
  /** Where the answers are kept; default `$XDG_CACHE_HOME/replay-history/<agent>-probe.json`. */
  cacheFile?: string;
  timeoutMs?: number;
  /** Tests only, never cached: this hook instead of our script (one that fails), the scratch workspace made so. */
  hook?: string;
  workspace?: (dir: string) => void;
}

export interface Probed {
  /** Taken from the cache (no agent was started). */
  cached: boolean;
}

/** One agent's side of the probe. */
export interface ProbeWire<Request> {
  /** The command's name, in what the probe says. */
  command: string;
  /** The cache file's name under replay-history's cache folder. */
  cacheName: string;
  /** What the proof depends on: the settings, hook and flags every run gets. */
  digest: string;
  /** The id the loopback model gives its call. */
  callId: string;
  /** The text the call's result must be: what the agent makes of our hook's deny. */
  expected: string;
  loopback: { credential?: Credential; routes: Route[] };
  /** The agent's request, or undefined when it is not one (answered with `badRequest`). */
  parse(raw: string): Request | undefined;
  badRequest(res: ServerResponse): void;
  /** The text of the result the request carries for `callId`, if any. */
  resultOf(request: Request): string | undefined;
  /** Whether to ask for the call (the first step), or to end the run. */
  asks(request: Request): boolean;
  /** Writes the loopback model's answer on the agent's wire. */
  answer(res: ServerResponse, message: Assistant, request: Request): void;
  environment(options: {
    workspace: string;
    baseURL: string;
    apiKey: string;
  }): HeadlessEnvironment & { settings: string };
  /** Our settings with `hook` as the deny hook (to put a failing hook in, in tests). */
  settings(hook: string): Record<string, unknown>;
}

/** Proves the hook live for this binary (or finds it proved in the cache); throws HookNotLive when it is not. */
export async function proveLineageHookLive<Request>(
  wire: ProbeWire<Request>,
  options: ProbeOptions,
): Promise<Probed> {
  const key = probeKey(options.binary, options.version, wire.digest);
  const cacheFile = options.cacheFile ?? cacheFileOf(wire.cacheName);
  const testing = options.hook !== undefined || options.workspace !== undefined;
  if (!testing && readProbeCache<{ live: true }>(cacheFile)[key]?.live === true) return { cached: true };
  await probe(wire, options);
  if (!testing) rememberProbe(cacheFile, key, { live: true });
  return { cached: false };
}

async function probe<Request>(wire: ProbeWire<Request>, options: ProbeOptions): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), `replay-${wire.command}-probe-`)));
  const marker = join(workspace, 'marker');
  let output: string | undefined;
  const secret = newSecret();
  const ask: Assistant = {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: wire.callId,
        type: 'function',
        function: { name: 'run_shell_command', arguments: JSON.stringify({ command: `touch ${marker}` }) },
      },
    ],
  };
  const handle: Parameters<typeof serveLoopback>[0] = (req, res) => {
    readBody(req).then(
      (raw) => {
        const request = wire.parse(raw.toString('utf8'));
        if (request === undefined) {
          wire.badRequest(res);
          return;
        }
        output ??= wire.resultOf(request);
        wire.answer(res, wire.asks(request) ? ask : { role: 'assistant', content: 'Done.' }, request);
      },
      () => res.destroy(),
    );
  };
  const server = await serveLoopback(handle, { secret, ...wire.loopback });
  const environment = wire.environment({ workspace, baseURL: server.origin, apiKey: secret });
  try {
    options.workspace?.(workspace);
    if (options.hook) {
      const file = JSON.parse(readFileSync(environment.settings, 'utf8')) as Record<string, unknown>;
      writeFileSync(environment.settings, JSON.stringify({ ...file, ...wire.settings(options.hook) }));
    }
    const [node, ...watch] = environment.watchdog;
    const child = await execa(
      node as string,
      [...watch, String(process.pid), options.binary, ...environment.args],
      {
        cwd: workspace,
        env: environment.env,
        extendEnv: false,
        input: 'Run the command you are given.',
        reject: false,
        timeout: options.timeoutMs ?? 120_000,
        forceKillAfterDelay: 2_000,
      },
    );
    if (existsSync(marker) || output !== wire.expected) {
      const tail = String(child.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join('\n');
      const name = wire.command;
      throw new HookNotLive(
        existsSync(marker)
          ? `the probe command ran: this ${name} ran a tool its deny hook should have stopped`
          : output === undefined
            ? `${name} never sent the probe call's result (exit ${child.exitCode ?? child.signal})${tail ? `:\n${tail}` : ''}`
            : `the probe call was not stopped by the deny hook: ${name} sent ${JSON.stringify(output.slice(0, 300))}`,
      );
    }
  } finally {
    environment.cleanup();
    rmSync(workspace, { recursive: true, force: true });
    await server.close();
  }
}
