// The hermetic world an opencode replay runs in: a private HOME/XDG tree, config dir, database and plugin,
// all under one temporary directory, so the user's own opencode config, sessions and credentials are neither
// read nor written, and nothing lands in the workspace. Everything is prepared before the run: opencode's
// dependency install finds its work done and does not go to the network.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, parse, resolve } from 'node:path';
import { alive } from '../../processes.js';
import { opencodeVersion } from '../versions.js';
import {
  answersSocketEnv,
  answersUrlEnv,
  modelSocketEnv,
  type PluginOptions,
  parentPidEnv,
  pluginFileName,
  pluginSource,
  providerId,
} from './plugin.js';

export { opencodeVersion };

/**
 * What opencode must not do in a replay (or a test's recording): read the project's config (its plugins and MCP
 * servers would run), update itself, fetch the models list, download LSP servers, share, load its default
 * plugins, read Claude Code's files; and no colour in what it prints.
 */
export const quietSettings = {
  OPENCODE_DISABLE_PROJECT_CONFIG: '1',
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  NO_COLOR: '1',
} as const;

export interface EnvironmentOptions {
  /** The directory opencode works in (its cwd and $PWD). Only read here, never written. */
  workspace: string;
  /** The OpenAI-compatible endpoint the model is reached at (the recording proxy), e.g. http://127.0.0.1:1234/v1. */
  baseURL: string;
  /** The model id sent to `baseURL`; default `replay`. */
  model?: string;
  /**
   * The model's context window and answer cap, in tokens. opencode compacts a session only when it knows the
   * window; without one, a long session is sent whole until the model refuses it.
   */
  limit?: { context: number; output: number };
  /** The key opencode sends to `baseURL`: the run's secret, which our proxy requires. Default a placeholder. */
  apiKey?: string;
  /**
   * The recording proxy's Unix socket: the plugin gives opencode's provider a fetch that connects there (see
   * `modelSocketEnv`; `baseURL` is then the proxy's `http://localhost:0/v1`). Needs the plugin.
   */
  modelSocket?: string;
  /** Where the plugin asks (URL and socket in its env) and the secret it sends (in the plugin file). */
  answers?: { url: string; socket?: string; secret: string };
  /** The replay process: the plugin stops opencode when it is gone. */
  parentPid?: number;
  /** Without the plugin (a plain run, e.g. to compare what the model is offered). Default: with. */
  plugin?: false | PluginOptions;
  /** Extra opencode config merged at the top level (tests: an MCP server). */
  config?: Record<string, unknown>;
  /** Directories put first on PATH. */
  pathPrefix?: string[];
  /** Where the temporary tree goes; default the OS temp dir. */
  parent?: string;
  /**
   * A private tree made beforehand with `makePrivateTree` (the driver's servers put their sockets in it before
   * the config can be written); default a new one under `parent`.
   */
  root?: string;
}

export interface Environment {
  root: string;
  workspace: string;
  /** `OPENCODE_CONFIG_DIR`: opencode.json and plugins/. */
  configDir: string;
  /** `$XDG_DATA_HOME/opencode`: logs, snapshots, tool output overflow. */
  dataDir: string;
  /** `OPENCODE_DB`: kept across the runs of one session (`--session`). */
  dbPath: string;
  /** The plugin file, when there is one. */
  pluginPath?: string;
  /** The complete environment for the opencode process (run it with extendEnv: false). */
  env: Record<string, string>;
  /** Removes the whole private tree (never the workspace). */
  cleanup(): void;
}

/**
 * opencode 1.18.33 runs `Npm.install(dir, {add: ['@opencode-ai/plugin']})` on the global config dir and on every
 * config dir with plugins. It skips the install when `node_modules/` exists and every dependency named in
 * package.json (plus the one it adds) is in package-lock.json's root package. Our plugin imports nothing, so
 * an empty node_modules is enough: the install is a no-op, offline or not.
 */
function stubDependencies(dir: string): void {
  const dependencies = { '@opencode-ai/plugin': opencodeVersion };
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ dependencies }, null, 2)}\n`);
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: 'replay-history-opencode', lockfileVersion: 3, requires: true, packages: { '': { dependencies } } }, null, 2)}\n`,
  );
}

/** The private trees of opencode replays; another driver passes its own prefix (`replay-claude-`). */
const treePrefix = 'replay-opencode-';
/** Names the process that made a tree, so a later run can remove the trees of one that was killed. */
const ownerFile = 'owner.pid';

/**
 * Removes the private trees of replays that were killed (SIGKILL, a crash: no cleanup ran), recognised by
 * their owner's PID being gone. Trees without an owner file are left alone: they may be being made right now.
 */
export function sweepStale(parent = tmpdir(), prefix = treePrefix): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const root = join(parent, name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(root, ownerFile), 'utf8').trim());
    } catch {
      continue;
    }
    if (!(owner > 0) || alive(owner)) continue;
    rmSync(root, { recursive: true, force: true });
    removed.push(root);
  }
  return removed;
}

/**
 * opencode writes its project id into the repository (`<git common dir>/opencode`) on every run in a git
 * workspace. Git takes the files shared by worktrees from `$GIT_COMMON_DIR` when it is set, so opencode gets a
 * private view of that directory: a symlink to each of its entries (objects, refs, config: read as they are),
 * and a copy of an existing `opencode` file, so the write lands here and the repository is untouched. Snapshots
 * (the git work that would write through the view) are off in the config.
 */
function withoutGit(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  // The user's own GIT_DIR/GIT_COMMON_DIR/GIT_WORK_TREE would point git elsewhere than the workspace.
  for (const name of ['GIT_DIR', 'GIT_COMMON_DIR', 'GIT_WORK_TREE']) delete out[name];
  return out;
}

/**
 * The project's instruction files, as opencode would find them with project config on: the first of AGENTS.md,
 * CLAUDE.md, CONTEXT.md present in the workspace or a directory above it (up to the repository's top, or the
 * root outside one), every such file, nearest first. Project config stays off (its plugins and MCP servers
 * would run), so these go in through our config's `instructions`: the system prompt is the user's own.
 */
/** The repository the workspace is in (its top and its common git dir), asked of git once; none outside one. */
function gitRepository(workspace: string): { top: string; common: string } | undefined {
  const asked = spawnSync(
    'git',
    ['-C', workspace, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'],
    { encoding: 'utf8', env: withoutGit(process.env) },
  );
  const [top, common] = asked.status === 0 ? asked.stdout.trim().split('\n') : [];
  return top && common ? { top, common } : undefined;
}

export function projectInstructions(workspace: string, git = gitRepository(workspace)): string[] {
  const stop = git ? resolve(git.top) : parse(resolve(workspace)).root;
  const dirs: string[] = [];
  for (let dir = resolve(workspace); ; dir = dirname(dir)) {
    dirs.push(dir);
    if (dir === stop || dirname(dir) === dir) break;
  }
  for (const name of ['AGENTS.md', 'CLAUDE.md', 'CONTEXT.md']) {
    const found = dirs
      .map((dir) => join(dir, name))
      .filter((file) => existsSync(file) && statSync(file).isFile());
    if (found.length > 0) return found;
  }
  return [];
}

function gitView(common: string, root: string): string {
  const view = join(root, 'git-common');
  mkdirSync(view);
  for (const name of readdirSync(common)) {
    if (name === 'opencode') copyFileSync(join(common, name), join(view, name));
    else symlinkSync(join(common, name), join(view, name));
  }
  return view;
}

/**
 * A new private tree (0700, as mkdtemp makes it) owned by this process, after the trees of killed replays are
 * swept. Removed by the environment's cleanup, or by the caller if no environment is made in it.
 */
export function makePrivateTree(parent = tmpdir(), prefix = treePrefix): string {
  sweepStale(parent, prefix);
  const root = mkdtempSync(join(parent, prefix));
  try {
    writeFileSync(join(root, ownerFile), `${process.pid}\n`);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return root;
}

export function prepareEnvironment(options: EnvironmentOptions): Environment {
  const root = options.root ?? makePrivateTree(options.parent ?? tmpdir());
  try {
    const home = join(root, 'home');
    const xdg = {
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      XDG_CACHE_HOME: join(home, '.cache'),
    };
    const configDir = join(root, 'config');
    const globalConfig = join(xdg.XDG_CONFIG_HOME, 'opencode');
    for (const dir of [configDir, globalConfig, ...Object.values(xdg)]) mkdirSync(dir, { recursive: true });
    stubDependencies(globalConfig);
    stubDependencies(configDir);

    const model = options.model ?? 'replay';
    const git = gitRepository(options.workspace);
    const instructions = projectInstructions(options.workspace, git);
    const config = {
      $schema: 'https://opencode.ai/config.json',
      provider: {
        [providerId]: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Replay',
          options: { baseURL: options.baseURL, apiKey: options.apiKey ?? 'sk-replay' },
          // Images are offered as the builtin driver offers them: a screenshot in a prompt reaches the model (a
          // model that cannot take one says so), rather than opencode telling it that it cannot see images.
          models: {
            [model]: {
              name: model,
              tool_call: true,
              attachment: true,
              modalities: { input: ['text', 'image'], output: ['text'] },
              ...(options.limit ? { limit: options.limit } : {}),
            },
          },
        },
      },
      // Title generation goes to the small model: same endpoint, so the proxy sees (and tags) it.
      model: `replay/${model}`,
      small_model: `replay/${model}`,
      autoupdate: false,
      share: 'disabled',
      // Snapshots are git work over the whole workspace after every step (for /undo): nothing a replay needs.
      snapshot: false,
      ...(instructions.length > 0 ? { instructions } : {}),
      ...options.config,
    };
    // It holds the run's secret (the provider key): readable by this user only.
    writeFileSync(join(configDir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

    let pluginPath: string | undefined;
    if (options.plugin !== false) {
      mkdirSync(join(configDir, 'plugins'), { recursive: true });
      pluginPath = join(configDir, 'plugins', pluginFileName);
      const secret = options.answers?.secret;
      writeFileSync(pluginPath, pluginSource({ ...options.plugin, ...(secret ? { secret } : {}) }), {
        mode: 0o600,
      });
    }

    if (options.modelSocket) {
      if (options.plugin === false) throw new Error('a model socket needs the plugin (it holds the fetch)');
      // opencode asks a plugin's auth loader (our socket fetch) only for a provider it has a key stored for.
      const dataDir = join(xdg.XDG_DATA_HOME, 'opencode');
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(
        join(dataDir, 'auth.json'),
        `${JSON.stringify({ [providerId]: { type: 'api', key: options.apiKey ?? 'sk-replay' } }, null, 2)}\n`,
        { mode: 0o600 },
      );
    }

    const dbPath = join(root, 'opencode.db');
    const gitCommon = git ? gitView(git.common, root) : undefined;
    const path = [...(options.pathPrefix ?? []), process.env.PATH ?? '/usr/bin:/bin'].join(':');
    const env: Record<string, string> = {
      PATH: path,
      HOME: home,
      ...xdg,
      PWD: options.workspace,
      OPENCODE_CONFIG_DIR: configDir,
      OPENCODE_DB: dbPath,
      ...quietSettings,
      ...(gitCommon ? { GIT_COMMON_DIR: gitCommon } : {}),
      ...(options.answers ? { [answersUrlEnv]: options.answers.url } : {}),
      ...(options.answers?.socket ? { [answersSocketEnv]: options.answers.socket } : {}),
      ...(options.modelSocket ? { [modelSocketEnv]: options.modelSocket } : {}),
      ...(options.parentPid ? { [parentPidEnv]: String(options.parentPid) } : {}),
    };
    return {
      root,
      workspace: options.workspace,
      configDir,
      dataDir: join(xdg.XDG_DATA_HOME, 'opencode'),
      dbPath,
      ...(pluginPath ? { pluginPath } : {}),
      env,
      cleanup: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
