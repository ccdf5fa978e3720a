// Proof that the deny hook is live, before any recorded session is replayed through this Codex. Codex runs a
// hook only when told to trust it (`--dangerously-bypass-hook-trust`), and skips it silently otherwise — every
// tool would then run — so nothing is taken on trust: a run of this binary with the replay's own config and
// flags, in a scratch workspace, against a loopback model of ours that asks for one harmless command (`touch` of
// a marker in that workspace). The hook is live when Codex sends the call's output back as its "blocked by
// PreToolUse hook" text with our reason and the marker was not made; anything else and the replay refuses.
// The answer is cached per binary (path, size, mtime, version) and config digest: the probe costs one Codex
// start-up (~1.5 s). The same probe asks the binary which model slugs it knows (its tool set depends on it).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { newSecret, readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { cacheFileOf, probeKey, readProbeCache, rememberProbe } from '../common/probe-cache.js';
import { writeResponseStream } from '../wire/openai-responses.js';
import { configToml, denyReason, execArgs, hookScript, prepareCodexEnvironment } from './environment.js';

export class HookNotLive extends Error {}

export interface ProbeOptions {
  binary: string;
  version?: string;
  /** Where the answers are kept; default `$XDG_CACHE_HOME/replay-history/codex-probe.json`. */
  cacheFile?: string;
  timeoutMs?: number;
}

export interface Probed {
  /** The model slugs this Codex ships metadata for (`codex debug models`). */
  models: string[];
  /** Taken from the cache (no Codex was started). */
  cached: boolean;
}

interface Entry {
  live: true;
  models: string[];
}

/** What the probe proved depends on: the config, hook and flags every run gets (their text, as written). */
export function configDigest(): string {
  return createHash('sha256')
    .update(configToml({ model: '@MODEL@', baseURL: '@URL@', hook: '@HOOK@', updatePlan: true }))
    .update('\0')
    .update(hookScript())
    .update('\0')
    .update(execArgs('@WORKSPACE@').join('\0'))
    .digest('hex');
}

/** Proves the hook live for this binary (or finds it proved in the cache); throws HookNotLive when it is not. */
export async function proveHookLive(options: ProbeOptions): Promise<Probed> {
  const key = probeKey(options.binary, options.version, configDigest());
  const cacheFile = options.cacheFile ?? cacheFileOf('codex-probe.json');
  const known = readProbeCache<Entry>(cacheFile)[key];
  if (known?.live === true && Array.isArray(known.models)) return { models: known.models, cached: true };

  const models = knownModels(options.binary);
  await probe(options, models[0] ?? 'gpt-5.5');
  rememberProbe(cacheFile, key, { live: true, models });
  return { models, cached: false };
}

/** The slugs `codex debug models` lists (run in a scratch CODEX_HOME); none when it cannot say. */
export function knownModels(binary: string): string[] {
  const home = mkdtempSync(join(tmpdir(), 'replay-codex-models-'));
  try {
    const listed = spawnSync(binary, ['debug', 'models'], {
      encoding: 'utf8',
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { HOME: home, CODEX_HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const value = JSON.parse(listed.stdout ?? '') as { models?: { slug?: unknown }[] };
    return (value.models ?? []).flatMap((model) => (typeof model.slug === 'string' ? [model.slug] : []));
  } catch {
    return [];
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const callId = 'call_replay_history_probe';

async function probe(options: ProbeOptions, model: string): Promise<void> {
  const workspace = mkdtempSync(join(tmpdir(), 'replay-codex-probe-'));
  const marker = join(workspace, 'marker');
  let output: unknown;
  let asked = 0;
  const secret = newSecret();
  const handle: Parameters<typeof serveLoopback>[0] = (req, res) => {
    readBody(req).then(
      (raw) => {
        let body: { input?: Record<string, unknown>[]; model?: string } = {};
        try {
          body = JSON.parse(raw.toString('utf8')) as typeof body;
        } catch {
          // Not JSON: answered with an error below.
        }
        const input = Array.isArray(body.input) ? body.input : [];
        const answered = input.find((item) => item.call_id === callId && /_output$/.test(String(item.type)));
        if (!Array.isArray(body.input)) {
          sendJson(res, 400, { error: { message: 'replay-history: probe', type: 'invalid_request_error' } });
          return;
        }
        asked++;
        if (answered) output ??= answered.output;
        const id = `resp_probe_${asked}`;
        writeResponseStream(res, {
          id,
          model: body.model ?? model,
          status: 'completed',
          output: answered
            ? [
                {
                  id: `msg_${id}`,
                  type: 'message',
                  role: 'assistant',
                  status: 'completed',
                  content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
                },
              ]
            : [
                {
                  id: `fc_${id}`,
                  type: 'function_call',
                  status: 'completed',
                  call_id: callId,
                  name: 'exec_command',
                  arguments: JSON.stringify({ cmd: `touch ${marker}` }),
                },
              ],
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
        });
      },
      () => res.destroy(),
    );
  };
  const server = await serveLoopback(handle, { secret, routes: [{ method: 'POST', path: '/v1/responses' }] });
  const environment = prepareCodexEnvironment({ workspace, baseURL: server.origin, apiKey: secret, model });
  try {
    const child = await execa(options.binary, [...environment.args, '-'], {
      cwd: workspace,
      env: environment.env,
      extendEnv: false,
      input: 'Run the command you are given.',
      reject: false,
      timeout: options.timeoutMs ?? 120_000,
      forceKillAfterDelay: 2_000,
    });
    const text = typeof output === 'string' ? output : JSON.stringify(output ?? null);
    const blocked = text.startsWith('Command blocked by PreToolUse hook:') && text.includes(denyReason);
    if (existsSync(marker) || !blocked) {
      const tail = String(child.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join('\n');
      throw new HookNotLive(
        existsSync(marker)
          ? 'the probe command ran: this codex ran a tool its deny hook should have stopped'
          : output === undefined
            ? `codex never sent the probe call's output (exit ${child.exitCode ?? child.signal})${tail ? `:\n${tail}` : ''}`
            : `the probe call was not stopped by the deny hook: codex sent ${JSON.stringify(text.slice(0, 300))}`,
      );
    }
  } finally {
    environment.cleanup();
    rmSync(workspace, { recursive: true, force: true });
    await server.close();
  }
}
