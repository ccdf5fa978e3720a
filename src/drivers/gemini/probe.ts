// Proof that the deny hook is live, before any recorded session is replayed through this Gemini CLI. A hook can
// be switched off by a setting, a hook that fails may let the tool run, and another version may drop hooks: nothing
// is taken on trust. A run of this binary with the replay's own settings, env and flags, in a scratch workspace,
// against a loopback model of ours that asks for one harmless command (`touch` of a marker in that workspace).
// The hook is live when the CLI sends the call's `functionResponse` back, under our id, saying it was blocked
// with exactly our reason, and the marker was not made; anything else and the replay refuses. The answer is
// cached per binary (path, size, mtime, version) and settings digest: the probe costs one start-up (~5 s).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { newSecret, readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { cacheFileOf, probeKey, readProbeCache, rememberProbe } from '../common/probe-cache.js';
import { type GeminiRequest, responseText, writeGeminiStream } from '../wire/gemini.js';
import { blockedText, hookScript, prepareGeminiEnvironment, runArgs, settings } from './environment.js';
import { kindOf } from './proxy.js';

export class HookNotLive extends Error {}

export interface ProbeOptions {
  binary: string;
  version?: string;
  /** Where the answers are kept; default `$XDG_CACHE_HOME/replay-history/gemini-probe.json`. */
  cacheFile?: string;
  timeoutMs?: number;
  /** Tests only, never cached: this hook instead of our script (one that fails), the scratch workspace made so. */
  hook?: string;
  workspace?: (dir: string) => void;
}

export interface Probed {
  /** Taken from the cache (no Gemini CLI was started). */
  cached: boolean;
}

const probeModel = 'gemini-2.5-pro';

/** What the probe proved depends on: the settings, hook and flags every run gets (their text, as written). */
export function settingsDigest(): string {
  return createHash('sha256')
    .update(JSON.stringify(settings({ hook: '@HOOK@' })))
    .update('\0')
    .update(hookScript())
    .update('\0')
    .update(runArgs('@MODEL@').join('\0'))
    .digest('hex');
}

/** Proves the hook live for this binary (or finds it proved in the cache); throws HookNotLive when it is not. */
export async function proveHookLive(options: ProbeOptions): Promise<Probed> {
  const key = probeKey(options.binary, options.version, settingsDigest());
  const cacheFile = options.cacheFile ?? cacheFileOf('gemini-probe.json');
  const testing = options.hook !== undefined || options.workspace !== undefined;
  if (!testing && readProbeCache<{ live: true }>(cacheFile)[key]?.live === true) return { cached: true };
  await probe(options);
  if (!testing) rememberProbe(cacheFile, key, { live: true });
  return { cached: false };
}

const callId = 'rh_probe_1';

async function probe(options: ProbeOptions): Promise<void> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'replay-gemini-probe-')));
  const marker = join(workspace, 'marker');
  let output: string | undefined;
  const secret = newSecret();
  const handle: Parameters<typeof serveLoopback>[0] = (req, res) => {
    readBody(req).then(
      (raw) => {
        let body: GeminiRequest | undefined;
        try {
          body = JSON.parse(raw.toString('utf8')) as GeminiRequest;
        } catch {
          // Not JSON: answered with an error below.
        }
        if (!body || !Array.isArray(body.contents)) {
          sendJson(res, 400, { error: { code: 400, message: 'replay-history: probe' } });
          return;
        }
        for (const content of body.contents)
          for (const part of content.parts ?? [])
            if (part.functionResponse?.id === callId) output ??= responseText(part.functionResponse.response);
        const ask = kindOf(body) === 'step' && !body.contents.some((content) => content.role === 'model');
        writeGeminiStream(
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
          probeModel,
          { prompt_tokens: 1, completion_tokens: 1 },
        );
      },
      () => res.destroy(),
    );
  };
  const server = await serveLoopback(handle, {
    secret,
    credential: { header: 'x-goog-api-key' },
    routes: [{ method: 'POST', path: '/v1beta/models/', prefix: true }],
  });
  const environment = prepareGeminiEnvironment({
    workspace,
    baseURL: server.origin,
    apiKey: secret,
    model: probeModel,
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
    if (existsSync(marker) || output !== blockedText) {
      const tail = String(child.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join('\n');
      throw new HookNotLive(
        existsSync(marker)
          ? 'the probe command ran: this gemini ran a tool its deny hook should have stopped'
          : output === undefined
            ? `gemini never sent the probe call's result (exit ${child.exitCode ?? child.signal})${tail ? `:\n${tail}` : ''}`
            : `the probe call was not stopped by the deny hook: gemini sent ${JSON.stringify(output.slice(0, 300))}`,
      );
    }
  } finally {
    environment.cleanup();
    rmSync(workspace, { recursive: true, force: true });
    await server.close();
  }
}
