// Which tools this opencode offers its model, found by asking it rather than from a list written here: a plain
// opencode run (no plugin) in a private environment sends its first agent step to a loopback endpoint of ours,
// which reads the names in `tools` and refuses the step. The override plugin then covers exactly those, for any
// opencode version. The answer is cached per binary and model: the probe costs one opencode start-up (~5 s).
// The endpoint is gated like every loopback server (loopback.ts): opencode's provider key is a fresh secret.
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { newSecret, readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { prepareEnvironment } from './environment.js';

export class ProbeError extends Error {}

export interface ProbeOptions {
  binary: string;
  /** The model id the run will use: opencode offers some tools by model (edit/write or apply_patch). */
  model: string;
  /** Where the answers are kept; default `$XDG_CACHE_HOME/replay-history/opencode-tools.json`. */
  cacheFile?: string;
  timeoutMs?: number;
}

export interface Probed {
  tools: string[];
  /** Taken from the cache (no opencode was started). */
  cached: boolean;
}

function defaultCacheFile(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'replay-history', 'opencode-tools.json');
}

function readCache(file: string): Record<string, string[]> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, string[]>)
      : {};
  } catch {
    return {};
  }
}

/** The tools opencode offers the model `model`, by name, sorted. */
export async function offeredTools(options: ProbeOptions): Promise<Probed> {
  const stat = statSync(options.binary);
  // A rebuilt or replaced binary has another size or mtime: probed again.
  const key = [options.binary, stat.size, Math.round(stat.mtimeMs), options.model].join('\0');
  const cacheFile = options.cacheFile ?? defaultCacheFile();
  const known = readCache(cacheFile)[key];
  if (Array.isArray(known) && known.length > 0) return { tools: known, cached: true };

  const tools = await probe(options);
  const cache = readCache(cacheFile);
  cache[key] = tools;
  try {
    mkdirSync(join(cacheFile, '..'), { recursive: true });
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(cache, null, 2)}\n`);
    renameSync(temp, cacheFile);
  } catch {
    // A cache that cannot be written costs a probe next time, nothing more.
  }
  return { tools, cached: false };
}

async function probe(options: ProbeOptions): Promise<string[]> {
  let offered: string[] | undefined;
  const secret = newSecret();
  const handle: Parameters<typeof serveLoopback>[0] = (req, res) => {
    readBody(req).then(
      (raw) => {
        let body: { tools?: { function?: { name?: unknown } }[] } = {};
        try {
          body = JSON.parse(raw.toString('utf8')) as typeof body;
        } catch {
          // Not JSON: refused below like anything else.
        }
        const names = (body.tools ?? [])
          .map((tool) => tool.function?.name)
          .filter((name): name is string => typeof name === 'string');
        // The first request with tools is the agent step; title generation has none.
        if (names.length > 0) offered ??= names;
        sendJson(res, 400, {
          error: { message: 'replay-history: tool probe, nothing to answer', type: 'invalid_request_error' },
        });
      },
      () => res.destroy(),
    );
  };
  // opencode reaches its provider only by URL: a TCP port on 127.0.0.1, behind the gate.
  const server = await serveLoopback(handle, {
    secret,
    routes: [{ method: 'POST', path: '/v1/chat/completions' }],
  });
  const workspace = mkdtempSync(join(tmpdir(), 'replay-probe-'));
  const environment = prepareEnvironment({
    workspace,
    baseURL: `${server.origin}/v1`,
    model: options.model,
    apiKey: secret,
    plugin: false,
  });
  try {
    const child = await execa(
      options.binary,
      ['run', '--format', 'json', '--model', `replay/${options.model}`],
      {
        cwd: workspace,
        env: environment.env,
        extendEnv: false,
        input: 'Which tools do you have?',
        reject: false,
        timeout: options.timeoutMs ?? 120_000,
        forceKillAfterDelay: 2_000,
      },
    );
    if (!offered) {
      const tail = String(child.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-5)
        .join('\n');
      throw new ProbeError(
        `opencode never asked its model with tools (exit ${child.exitCode ?? child.signal})${tail ? `:\n${tail}` : ''}`,
      );
    }
    return [...new Set(offered)].sort();
  } finally {
    environment.cleanup();
    rmSync(workspace, { recursive: true, force: true });
    await server.close();
  }
}
