// The private world a replayed Qwen Code runs in: its own HOME and TMPDIR in a 0700 tree of this run (Qwen
// writes its chats, memory, usage records and extension store under ~/.qwen, never in the user's), settings of
// ours alone, and the one setting that matters: a PreToolUse hook on every tool that denies it.
//
// Qwen reads four settings layers: system defaults, user (~/.qwen/settings.json), the workspace's
// `.qwen/settings.json`, and system (highest). Ours are the system layer (QWEN_CODE_SYSTEM_SETTINGS_PATH, in
// the tree), the system defaults and the user layer are empty files of ours (so /etc/qwen-code is never read).
// A workspace layer cannot be switched off without losing the tools headless yolo offers (an untrusted folder
// is forced to approval mode "default", which offers no shell, write or edit), and it can run code (its
// MCP servers start) or turn every hook off (`disableAllHooks`): the driver refuses a workspace that has one
// (driver.ts), and our `disableAllHooks: false` is in the layer that wins.
//
// The hook is a /bin/sh script: the reason on stderr and exit 2 (Qwen's "blocking" exit: a deny with that
// text). Qwen fails OPEN on a hook that fails — exit 1, any other status, a signal, a hook that cannot start, and
// exit 2 with nothing on stderr all let the tool run (checked on 0.24.4, test/drivers/qwen/hook.test.ts) — so
// the script needs nothing that can fail: should writing stderr fail, it prints the deny answer as JSON on
// stdout and exits 0, Qwen's other way to deny.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makePrivateTree } from '../opencode/environment.js';
import { watchdogScript } from './watchdog.js';

export { qwenVersion } from '../versions.js';

export const treePrefix = 'replay-qwen-';

/** Why every tool call is refused: the result the model is shown is the recorded one (the proxy's). */
export const denyReason = 'replay-history: this call is answered from the recording; it was not run';

export const denyAnswer = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: 'PreToolUse',
    permissionDecision: 'deny',
    permissionDecisionReason: denyReason,
  },
});

/**
 * The hook script: every call denied, whatever its input. Its input is read (and thrown away) so Qwen's write
 * to it cannot fail; the reason goes to stderr with exit 2, or, if that cannot be written, the JSON answer to
 * stdout with exit 0. Both are a deny to Qwen; a bare exit status never is.
 */
export function hookScript(): string {
  return `#!/bin/sh
# replay-history: every tool call is denied before it runs; its recorded result is given to the model instead.
cat >/dev/null 2>&1
if printf '%s\\n' '${denyReason}' >&2; then exit 2; fi
printf '%s\\n' '${denyAnswer}'
exit 0
`;
}

export interface QwenSettingsOptions {
  /** The deny hook's path. */
  hook: string;
}

/** Our settings (the system layer): OpenAI auth, no telemetry or updates, hooks on, the deny hook. */
export function settings(options: QwenSettingsOptions): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false },
    // A layer below cannot turn the hook off: this one wins.
    disableAllHooks: false,
    hooks: {
      PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: options.hook, timeout: 30 }] }],
    },
  };
}

export interface QwenEnvironmentOptions {
  workspace: string;
  /** Where the model calls go: the proxy's origin (`http://127.0.0.1:PORT`); `/v1` is added. */
  baseURL: string;
  /** The key Qwen presents to the proxy: the run's secret. */
  apiKey: string;
  /** The model name Qwen is told (`OPENAI_MODEL`): the recorded one. */
  model: string;
  /** Where the private tree is made (default: the system temp dir). */
  parent?: string;
}

export interface QwenEnvironment {
  root: string;
  home: string;
  hook: string;
  /** Our settings file (the system layer). */
  settings: string;
  /** The watchdog (watchdog.ts), as a command: run `[...watchdog, String(process.pid), qwen, ...args]`. */
  watchdog: string[];
  env: Record<string, string>;
  /** The arguments every `qwen` run of the replay takes, before `--session-id`/`--resume`. */
  args: string[];
  cleanup(): void;
}

/**
 * The flags of every run: one prompt from stdin, headless, the JSON result; yolo (the tool set a headless run
 * is offered: the hook decides, not a prompt), chats recorded (`--resume` needs them), no API log (it would be
 * written into the workspace).
 */
export const runArgs: readonly string[] = [
  '--output-format',
  'json',
  '--approval-mode',
  'yolo',
  '--chat-recording',
  '--openai-logging=false',
];

export function prepareQwenEnvironment(options: QwenEnvironmentOptions): QwenEnvironment {
  const root = makePrivateTree(options.parent ?? tmpdir(), treePrefix);
  try {
    const home = join(root, 'home');
    const qwenHome = join(home, '.qwen');
    const tmp = join(root, 'tmp');
    const etc = join(root, 'etc');
    for (const dir of [home, qwenHome, tmp, etc]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hook = join(root, 'deny-every-tool.sh');
    writeFileSync(hook, hookScript(), { mode: 0o700 });
    chmodSync(hook, 0o700);
    const watchdog = join(root, 'watch.mjs');
    writeFileSync(watchdog, watchdogScript(), { mode: 0o600 });
    const system = join(etc, 'settings.json');
    writeFileSync(system, `${JSON.stringify(settings({ hook }), null, 2)}\n`, { mode: 0o600 });
    const defaults = join(etc, 'system-defaults.json');
    writeFileSync(defaults, '{}\n', { mode: 0o600 });
    writeFileSync(join(qwenHome, 'settings.json'), '{}\n', { mode: 0o600 });
    const env: Record<string, string> = {
      HOME: home,
      TMPDIR: tmp,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      SHELL: '/bin/sh',
      LANG: process.env.LANG ?? 'C.UTF-8',
      PWD: options.workspace,
      NO_COLOR: '1',
      QWEN_CODE_SYSTEM_SETTINGS_PATH: system,
      QWEN_CODE_SYSTEM_DEFAULTS_PATH: defaults,
      QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
      OPENAI_BASE_URL: `${options.baseURL}/v1`,
      OPENAI_API_KEY: options.apiKey,
      OPENAI_MODEL: options.model,
    };
    return {
      root,
      home,
      hook,
      settings: system,
      watchdog: [process.execPath, watchdog],
      env,
      args: [...runArgs],
      cleanup: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
