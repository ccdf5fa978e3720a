// The private world a replayed Gemini CLI runs in: its own HOME and TMPDIR in a 0700 tree of this run (Gemini
// writes its chats, project registry, installation id and tool outputs under ~/.gemini, never in the user's),
// settings of ours alone, and the one setting that matters: a BeforeTool hook on every tool that denies it.
//
// Gemini CLI reads four settings layers: system defaults, user (~/.gemini/settings.json), the workspace's
// `.gemini/settings.json` (only in a trusted folder) and system (highest). It skips a system file whose directory
// or any parent is writable by others — every temp dir is — so ours is the **user** layer (in the private HOME),
// and the two system paths (GEMINI_CLI_SYSTEM_SETTINGS_PATH, GEMINI_CLI_SYSTEM_DEFAULTS_PATH) point at files
// that do not exist, so /etc/gemini-cli is never read. A workspace layer would win over ours, start its MCP
// servers, run its hooks and could switch ours off (`hooksConfig.enabled: false`, our hook's name in
// `hooksConfig.disabled`): the driver refuses a workspace that has one (driver.ts). The folder must be trusted
// for yolo (an untrusted one is forced to approval mode "default"): `--skip-trust` trusts it for the run only.
//
// The hook is a /bin/sh script: `{"decision": "deny", "reason": …}` on stdout and exit 0; should stdout fail, the
// reason on stderr and exit 2 (Gemini's other block). The CLI then sends the model
// `{"error": "Tool execution blocked: <reason>"}` under the call's id, which the proxy replaces. Whether a hook
// that fails stops the call is not taken on trust: the probe (probe.ts) proves the hook live before any replay.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HeadlessEnvironment } from '../common/headless.js';
import { makePrivateTree } from '../opencode/environment.js';
import { watchdogScript } from '../qwen/watchdog.js';

export { geminiVersion } from '../versions.js';

export const treePrefix = 'replay-gemini-';

/** Why every tool call is refused: the result the model is shown is the recorded one (the proxy's). */
export const denyReason = 'replay-history: this call is answered from the recording; it was not run';

export const denyAnswer = JSON.stringify({ decision: 'deny', reason: denyReason });

/** What Gemini CLI sends its model for a call the hook blocked. */
export const blockedText = `Tool execution blocked: ${denyReason}`;

/** The hook script: every call denied, whatever its input (read and thrown away so the CLI's write cannot fail). */
export function hookScript(): string {
  return `#!/bin/sh
# replay-history: every tool call is denied before it runs; its recorded result is given to the model instead.
cat >/dev/null 2>&1
if printf '%s\\n' '${denyAnswer}'; then exit 0; fi
printf '%s\\n' '${denyReason}' >&2
exit 2
`;
}

/** Our settings (the user layer): API-key auth, no telemetry or updates, hooks on, the deny hook. */
export function settings(options: { hook: string }): Record<string, unknown> {
  return {
    // With GOOGLE_GEMINI_BASE_URL set and no selected type the CLI picks "gateway", which headless refuses.
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    hooksConfig: { enabled: true },
    hooks: {
      BeforeTool: [
        {
          matcher: '.*',
          hooks: [{ name: 'replay-history-deny', type: 'command', command: options.hook, timeout: 30_000 }],
        },
      ],
    },
  };
}

export interface GeminiEnvironmentOptions {
  workspace: string;
  /** Where the model calls go: the proxy's origin (`http://127.0.0.1:PORT`). */
  baseURL: string;
  /** The key Gemini CLI presents to the proxy (`x-goog-api-key`): the run's secret. */
  apiKey: string;
  /** The model Gemini CLI is told (`--model`): the recorded one, so its router is not asked. */
  model: string;
  /** Where the private tree is made (default: the system temp dir). */
  parent?: string;
}

export interface GeminiEnvironment extends HeadlessEnvironment {
  home: string;
  hook: string;
  /** Our settings file (the user layer). */
  settings: string;
}

/**
 * The flags of every run: headless (the prompt is stdin, which is no terminal), the JSON result, yolo
 * (the tool set a headless run is offered: the hook decides, not a prompt), the folder trusted for this run.
 */
export function runArgs(model: string): string[] {
  return ['--output-format', 'json', '--approval-mode', 'yolo', '--skip-trust', '--model', model];
}

export function prepareGeminiEnvironment(options: GeminiEnvironmentOptions): GeminiEnvironment {
  const root = makePrivateTree(options.parent ?? tmpdir(), treePrefix);
  try {
    const home = join(root, 'home');
    const geminiHome = join(home, '.gemini');
    const tmp = join(root, 'tmp');
    for (const dir of [home, geminiHome, tmp]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hook = join(root, 'deny-every-tool.sh');
    writeFileSync(hook, hookScript(), { mode: 0o700 });
    chmodSync(hook, 0o700);
    const watchdog = join(root, 'watch.mjs');
    writeFileSync(watchdog, watchdogScript(), { mode: 0o600 });
    const file = join(geminiHome, 'settings.json');
    writeFileSync(file, `${JSON.stringify(settings({ hook }), null, 2)}\n`, { mode: 0o600 });
    const env: Record<string, string> = {
      HOME: home,
      TMPDIR: tmp,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      SHELL: '/bin/sh',
      LANG: process.env.LANG ?? 'C.UTF-8',
      PWD: options.workspace,
      NO_COLOR: '1',
      // One process: the relaunch (a child Node with more memory) would outlive a signal to the one we start.
      GEMINI_CLI_NO_RELAUNCH: 'true',
      // Files that do not exist: no system layer of the machine's is read.
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(root, 'etc', 'settings.json'),
      GEMINI_CLI_SYSTEM_DEFAULTS_PATH: join(root, 'etc', 'system-defaults.json'),
      GOOGLE_GEMINI_BASE_URL: options.baseURL,
      GEMINI_API_KEY: options.apiKey,
    };
    return {
      root,
      home,
      hook,
      settings: file,
      watchdog: [process.execPath, watchdog],
      env,
      args: runArgs(options.model),
      cleanup: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
