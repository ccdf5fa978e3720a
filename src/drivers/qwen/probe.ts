// Proof that the deny hook is live, before any recorded session is replayed through this Qwen. Qwen runs the tool
// whenever a hook fails (exit 1, a signal, a hook it cannot start, exit 2 without a reason), and a setting can
// turn every hook off, so nothing is taken on trust: a run of this binary with the replay's own settings, env and
// flags, in a scratch workspace, against a loopback model of ours that asks for one harmless command (`touch` of
// a marker in that workspace). The hook is live when Qwen sends the call's `tool` message back with exactly our
// reason and the marker was not made; anything else and the replay refuses. The answer is cached per binary
// (path, size, mtime, version) and settings digest: the probe costs one Qwen start-up (~3 s).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { newSecret, readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { cacheFileOf, probeKey, readProbeCache, rememberProbe } from '../common/probe-cache.js';
import { writeChatStream } from '../wire/openai-chat.js';
import { denyReason, hookScript, prepareQwenEnvironment, runArgs, settings } from './environment.js';
import { contentText, kindOf, type QwenRequest } from './proxy.js';

export class HookNotLive extends Error {}

export interface ProbeOptions {
  binary: string;
  version?: string;
  /** Where the answers are kept; default `$XDG_CACHE_HOME/replay-history/qwen-probe.json`. */
  cacheFile?: string;
  timeoutMs?: number;
  /** Tests only, never cached: this hook instead of our script (one that fails), the scratch workspace made so. */
  hook?: string;
  workspace?: (dir: string) => void;
}

export interface Probed {
  /** Taken from the cache (no Qwen was started). */
  cached: boolean;
}

/** What the probe proved depends on: the settings, hook and flags every run gets (their text, as written). */
export function settingsDigest(): string {
  return createHash('sha256')
    .update(JSON.stringify(settings({ hook: '@HOOK@' })))
    .update('\0')
    .update(hookScript())
    .update('\0')
    .update(runArgs.join('\0'))
    .digest('hex');
}

/** Proves the hook live for this binary (or finds it proved in the cache); throws HookNotLive when it is not. */
export async function proveHookLive(options: ProbeOptions): Promise<Probed> {
  const key = probeKey(options.binary, options.version, settingsDigest());
  const cacheFile = options.cacheFile ?? cacheFileOf('qwen-probe.json');
  const testing = options.hook !== undefined || options.workspace !== undefined;
  if (!testing && readProbeCache<{ live: true }>(cacheFile)[key]?.live === true) return { cached: true };
  await probe(options);
  if (!testing) rememberProbe(cacheFile, key, { live: true });
  return { cached: false };
}

const callId = 'call_replay_history_probe';

async function probe(options: ProbeOptions): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'replay-qwen-probe-')));
  const marker = join(workspace, 'marker');
  let output: string | undefined;
  const secret = newSecret();
  const handle: Parameters<typeof serveLoopback>[0] = (req, res) => {
    readBody(req).then(
      (raw) => {
        let body: QwenRequest | undefined;
        try {
          body = JSON.parse(raw.toString('utf8')) as QwenRequest;
        } catch {
          // Not JSON: answered with an error below.
        }
        if (!body || !Array.isArray(body.messages)) {
          sendJson(res, 400, { error: { message: 'replay-history: probe', type: 'invalid_request_error' } });
          return;
        }
        const answered = body.messages.find(
          (message) => message.role === 'tool' && message.tool_call_id === callId,
        );
        if (answered) output ??= contentText(answered.content);
        const ask = kindOf(body) === 'step' && !body.messages.some((message) => message.role === 'assistant');
        writeChatStream(
          res,
          ask
            ? {
                role: 'assistant',
                content: null,
                tool_calls: [
                  {
                    id: callId,
                    type: 'function',
                    function: {
                      name: 'run_shell_command',
                      arguments: JSON.stringify({ command: `touch ${marker}` }),
                    },
                  },
                ],
              }
            : { role: 'assistant', content: 'Done.' },
          body.model ?? 'probe',
          { prompt_tokens: 1, completion_tokens: 1 },
        );
      },
      () => res.destroy(),
    );
  };
  const server = await serveLoopback(handle, {
    secret,
    routes: [{ method: 'POST', path: '/v1/chat/completions' }],
  });
  const environment = prepareQwenEnvironment({
    workspace,
    baseURL: server.origin,
    apiKey: secret,
    model: 'qwen3-coder-plus',
  });
  try {
    options.workspace?.(workspace);
    if (options.hook) {
      const file = JSON.parse(readFileSync(environment.settings, 'utf8')) as ReturnType<typeof settings>;
      writeFileSync(environment.settings, JSON.stringify({ ...file, ...settings({ hook: options.hook }) }));
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
    if (existsSync(marker) || output !== denyReason) {
      const tail = String(child.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join('\n');
      throw new HookNotLive(
        existsSync(marker)
          ? 'the probe command ran: this qwen ran a tool its deny hook should have stopped'
          : output === undefined
            ? `qwen never sent the probe call's result (exit ${child.exitCode ?? child.signal})${tail ? `:\n${tail}` : ''}`
            : `the probe call was not stopped by the deny hook: qwen sent ${JSON.stringify(output.slice(0, 300))}`,
      );
    }
  } finally {
    environment.cleanup();
    rmSync(workspace, { recursive: true, force: true });
    await server.close();
  }
}
