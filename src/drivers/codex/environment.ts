// The private world a replayed Codex runs in: its own HOME, CODEX_HOME and TMPDIR in a 0700 tree of this run
// (Codex writes its rollouts, state database and installation id under CODEX_HOME, never in the user's), a
// config.toml of ours and nothing else (no user config, profiles, MCP servers, plugins or rules: the user's
// CODEX_HOME is never read, and a workspace's own `.codex/` is not trusted by a config that trusts no project),
// one model provider — the driver's proxy, on the Responses wire — and the one setting that matters: a
// PreToolUse hook on every tool that denies it.
//
// The hook is a /bin/sh script that exits 2 with the reason on stderr, Codex's "block": it needs no network, no
// replay-history and no file of ours. Codex runs it only with `--dangerously-bypass-hook-trust` (without the
// flag a hook is skipped silently and every tool runs), so the flag is in every run's arguments and the probe
// (probe.ts) proves the hook is live before a session is replayed. Codex's own `--sandbox read-only` is a
// second layer; the checker's copy-on-write view (or `--sandbox`) a third.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchdogScript } from '../common/watchdog.js';
import { makePrivateTree } from '../opencode/environment.js';

export { codexVersion } from '../versions.js';

export const treePrefix = 'replay-codex-';

/** Why every tool call is refused: the result the model is shown is the recorded one (the proxy's). */
export const denyReason = 'replay-history: this call is answered from the recording; it was not run';

/** The environment variable Codex reads its provider key from (`env_key`): the run's secret. */
export const keyVariable = 'REPLAY_HISTORY_CODEX_KEY';

/** The provider id in config.toml. */
export const providerId = 'replay_history';

/**
 * The hook script: every call denied, whatever its input. Its input is read (a hook that left its stdin
 * unread could fail on a closed pipe) and thrown away; exit 2 is the denial, whatever printing did.
 */
export function hookScript(): string {
  return `#!/bin/sh
# replay-history: every tool call is denied before it runs; its recorded result is given to the model instead.
cat >/dev/null 2>&1
printf '%s\\n' '${denyReason}' >&2
exit 2
`;
}

/** A TOML basic string. */
export function tomlString(value: string): string {
  return JSON.stringify(value);
}

export interface CodexConfigOptions {
  /** The model slug Codex is told it runs (one it knows: its tool set depends on it). */
  model: string;
  /** Where the model calls go: the proxy's origin (`http://127.0.0.1:PORT`); `/v1` is added. */
  baseURL: string;
  /** The deny hook's path. */
  hook: string;
  /** Offer update_plan (off by default in 0.169: on where the recorded session had it). */
  updatePlan?: boolean;
  /** `model_auto_compact_token_limit`: Codex compacts when a turn's tokens pass it (`--context-limit`). */
  compactAt?: number;
}

/** config.toml: the proxy as the only provider, no retries (a refusal is final), analytics off, the hook. */
export function configToml(options: CodexConfigOptions): string {
  return `# replay-history: the config of one replay's Codex (no user or project config is read).
model = ${tomlString(options.model)}
model_provider = "${providerId}"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false
${options.compactAt ? `model_auto_compact_token_limit = ${Math.floor(options.compactAt)}\n` : ''}
[analytics]
enabled = false

[feedback]
enabled = false

[history]
persistence = "none"
${options.updatePlan ? '\n[tools]\nupdate_plan = { enabled = true }\n' : ''}
[model_providers.${providerId}]
name = "replay-history"
base_url = ${tomlString(`${options.baseURL}/v1`)}
wire_api = "responses"
env_key = "${keyVariable}"
request_max_retries = 0
stream_max_retries = 0

[[hooks.PreToolUse]]
matcher = ".*"

[[hooks.PreToolUse.hooks]]
type = "command"
command = ${tomlString(options.hook)}
timeout = 30
`;
}

export interface CodexEnvironmentOptions extends Omit<CodexConfigOptions, 'hook'> {
  workspace: string;
  /** The key Codex presents to the proxy: the run's secret. */
  apiKey: string;
  /** Where the private tree is made (default: the system temp dir). */
  parent?: string;
}

export interface CodexEnvironment {
  root: string;
  home: string;
  codexHome: string;
  hook: string;
  /** The watchdog script: run `[watchdog, String(process.pid), codex, ...args]`. */
  watchdog: string;
  env: Record<string, string>;
  /** The arguments every `codex` run of the replay takes (`exec …`), before `resume ID` and the prompt. */
  args: string[];
  cleanup(): void;
}

/** The flags of every run: JSON events, a config read strictly, the hook trusted, no git check, read-only. */
export function execArgs(workspace: string): string[] {
  return [
    'exec',
    '--json',
    // A key of ours this Codex does not know means the config does not say what it is taken to say.
    '--strict-config',
    '--dangerously-bypass-hook-trust',
    '--skip-git-repo-check',
    '--sandbox',
    'read-only',
    '-C',
    workspace,
  ];
}

export function prepareCodexEnvironment(options: CodexEnvironmentOptions): CodexEnvironment {
  const root = makePrivateTree(options.parent ?? tmpdir(), treePrefix);
  try {
    const home = join(root, 'home');
    const codexHome = join(home, '.codex');
    const tmp = join(root, 'tmp');
    for (const dir of [home, codexHome, tmp]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hook = join(root, 'deny-every-tool.sh');
    writeFileSync(hook, hookScript(), { mode: 0o700 });
    chmodSync(hook, 0o700);
    const watchdog = join(root, 'watch.sh');
    writeFileSync(watchdog, watchdogScript(), { mode: 0o700 });
    chmodSync(watchdog, 0o700);
    writeFileSync(join(codexHome, 'config.toml'), configToml({ ...options, hook }), { mode: 0o600 });
    const env: Record<string, string> = {
      HOME: home,
      CODEX_HOME: codexHome,
      TMPDIR: tmp,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      SHELL: '/bin/sh',
      LANG: process.env.LANG ?? 'C.UTF-8',
      PWD: options.workspace,
      NO_COLOR: '1',
      [keyVariable]: options.apiKey,
    };
    return {
      root,
      home,
      codexHome,
      hook,
      watchdog,
      env,
      args: execArgs(options.workspace),
      cleanup: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
