// Runs the real opencode binary (npm `opencode-ai`, pinned) headless and offline, against a local
// OpenAI-compatible server, in a private HOME/XDG tree: what it writes is a real opencode data dir.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { findOpencode } from '../../src/drivers/opencode/binary.js';
import { quietSettings } from '../../src/drivers/opencode/environment.js';
import { installRipgrepStandIn } from './opencode-ripgrep.js';

/**
 * The binary itself: the pinned per-platform package this project installs (`opencode-linux-x64`, an optional
 * dependency), found as the CLI finds it. Never an `opencode` from PATH: the tests pin the version.
 */
export function opencodeBinary(): string {
  const found = findOpencode(undefined, { PATH: '' });
  if (found.from !== 'package')
    throw new Error('opencode binary not found: run npm ci (opencode-linux-x64 is an optional dependency)');
  return found.path;
}

export interface OpencodeHome {
  /** Everything opencode writes lives under here. */
  root: string;
  /** The project directory opencode works in (its cwd and $PWD). */
  project: string;
  /** `$XDG_DATA_HOME/opencode`: opencode.db, storage/, snapshot/, log/. */
  dataDir: string;
  env: Record<string, string>;
  remove(): void;
}

export interface OpencodeHomeOptions {
  baseURL: string;
  /** The model id the scripted server answers as. */
  model?: string;
  /** Context window given to opencode (a small one makes it compact on its own). */
  contextLimit?: number;
  /** Extra opencode config merged at the top level. */
  config?: Record<string, unknown>;
  /** A fixed project directory (created, emptied first); default: `project/` inside the temporary home. */
  project?: string | undefined;
}

/** A private HOME/XDG tree with a config that points opencode at the scripted server and nothing else. */
export function opencodeHome(options: OpencodeHomeOptions): OpencodeHome {
  const root = mkdtempSync(join(tmpdir(), 'opencode-home-'));
  const home = join(root, 'home');
  const project = options.project ?? join(root, 'project');
  if (options.project) rmSync(options.project, { recursive: true, force: true });
  const configDir = join(root, 'config-dir');
  const xdg = {
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
  for (const dir of [project, configDir, ...Object.values(xdg)]) mkdirSync(dir, { recursive: true });
  const model = options.model ?? 'scripted';
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: options.baseURL, apiKey: 'sk-scripted' },
        models: {
          [model]: {
            name: model,
            tool_call: true,
            ...(options.contextLimit ? { limit: { context: options.contextLimit, output: 1024 } } : {}),
          },
        },
      },
    },
    model: `scripted/${model}`,
    small_model: `scripted/${model}`,
    autoupdate: false,
    share: 'disabled',
    ...options.config,
  };
  writeFileSync(join(configDir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
  // The ripgrep stand-in goes first on PATH, so glob and grep give the same results on every machine.
  const bin = installRipgrepStandIn(join(root, 'bin'));
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    ...xdg,
    PWD: project,
    OPENCODE_CONFIG_DIR: configDir,
    ...quietSettings,
  };
  return {
    root,
    project,
    dataDir: join(xdg.XDG_DATA_HOME, 'opencode'),
    env,
    remove: () => {
      rmSync(root, { recursive: true, force: true });
      if (options.project) rmSync(options.project, { recursive: true, force: true });
    },
  };
}

export interface OpencodeRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The session the run used, from its JSON events. */
  sessionId?: string;
  /** The JSON events `--format json` printed. */
  events: { type: string; sessionID?: string; [key: string]: unknown }[];
}

/**
 * `opencode run` with the prompt piped on stdin (a positional prompt would reach the model wrapped in
 * quotes). `session` continues an existing session. The process is stopped by its own PID on timeout.
 */
export async function opencodeRun(
  home: OpencodeHome,
  prompt: string,
  options: { session?: string; timeoutMs?: number; extraArgs?: string[] } = {},
): Promise<OpencodeRun> {
  const args = ['run', '--format', 'json', ...(options.extraArgs ?? [])];
  if (options.session) args.push('--session', options.session);
  const child = execa(opencodeBinary(), args, {
    cwd: home.project,
    env: home.env,
    extendEnv: false,
    input: prompt,
    reject: false,
    timeout: options.timeoutMs ?? 60_000,
    forceKillAfterDelay: 2_000,
  });
  const result = await child;
  const stdout = String(result.stdout ?? '');
  const events: OpencodeRun['events'] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as OpencodeRun['events'][number]);
    } catch {
      // Not an event line.
    }
  }
  const sessionId = events.find((event) => typeof event.sessionID === 'string')?.sessionID;
  return {
    exitCode: result.exitCode ?? -1,
    stdout,
    stderr: String(result.stderr ?? ''),
    ...(sessionId ? { sessionId } : {}),
    events,
  };
}
