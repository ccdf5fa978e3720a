// The private world a replayed Claude Code runs in: its own HOME, config dir and TMPDIR in a 0700 tree of
// this run (Claude Code writes ~/.claude.json, its transcripts and per-session scratch files there, never in
// the user's), no project or user settings (`--setting-sources ""`: a project's hooks and MCP servers would
// run), no MCP server but our stand-ins for the recorded ones (`--strict-mcp-config`, mcp.ts), no traffic but
// the model calls, and the one setting that matters: a PreToolUse hook on every tool that denies it.
//
// The hook is a /bin/sh script that prints the deny answer and nothing else: it needs no network, no
// replay-history and no file of ours to do its job. Claude Code treats a hook that fails (an exit status
// other than 0 and 2, an HTTP hook it cannot reach) as a non-blocking error and runs the tool, so the hook
// must not be able to fail open; exit 2 is Claude Code's "block", taken if printing ever fails.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchdogScript } from '../common/watchdog.js';
import { makePrivateTree } from '../opencode/environment.js';
import { mcpConfig, type StandInTool, standInScript } from './mcp.js';

export { orphanExitCode, watchdogScript } from '../common/watchdog.js';

export { claudeCodeVersion } from '../versions.js';

export const treePrefix = 'replay-claude-';

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
 * The hook script: the deny answer printed for every call but one that starts a sub-agent (`Agent`), which
 * Claude Code then runs in place (its own calls come through this hook too). Claude Code writes the hook's
 * input as compact JSON, its own members first and `tool_input` after `tool_name`; only that top-level part,
 * before the first `"tool_input":`, is read, so nothing in a call's arguments can pass for an Agent call.
 * Anything else, unreadable input included, is denied. Exit 2 (block) should printing fail.
 */
export function hookScript(): string {
  return `#!/bin/sh
# replay-history: every tool call is denied (its recorded result is given to the model instead), but for an
# Agent call, which starts a sub-agent whose own calls come here too.
input=$(cat)
head=\${input%%\\"tool_input\\":*}
case "$head" in
  *'"hook_event_name":"PreToolUse","tool_name":"Agent",') exit 0 ;;
esac
printf '%s\\n' '${denyAnswer}' || exit 2
exit 0
`;
}

export interface ClaudeEnvironmentOptions {
  workspace: string;
  /** Where the model calls go: the driver's proxy (`http://127.0.0.1:PORT`). */
  baseURL: string;
  /** The key Claude Code presents to the proxy: the run's secret. */
  apiKey: string;
  /** `--tools`: the set the recorded session was offered. */
  tools?: readonly string[];
  /** Stand-ins for the recorded session's MCP servers (mcp.ts), by server name. */
  mcp?: ReadonlyMap<string, readonly StandInTool[]>;
  /** Where the private tree is made (default: the system temp dir). */
  parent?: string;
}

export interface ClaudeEnvironment {
  root: string;
  home: string;
  hook: string;
  /** The watchdog script (`watchdogScript`): run `[watchdog, String(process.pid), claude, ...args]`. */
  watchdog: string;
  settings: string;
  env: Record<string, string>;
  /** The arguments every `claude` run of the replay takes, before its prompt. */
  args: string[];
  cleanup(): void;
}

export function prepareClaudeEnvironment(options: ClaudeEnvironmentOptions): ClaudeEnvironment {
  const root = makePrivateTree(options.parent ?? tmpdir(), treePrefix);
  try {
    const home = join(root, 'home');
    const config = join(home, '.claude');
    const tmp = join(root, 'tmp');
    for (const dir of [home, config, tmp]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hook = join(root, 'deny-every-tool.sh');
    writeFileSync(hook, hookScript(), { mode: 0o700 });
    chmodSync(hook, 0o700);
    const watchdog = join(root, 'watch.sh');
    writeFileSync(watchdog, watchdogScript(), { mode: 0o700 });
    chmodSync(watchdog, 0o700);
    const settings = join(root, 'settings.json');
    writeFileSync(
      settings,
      `${JSON.stringify(
        {
          hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hook, timeout: 30 }] }] },
        },
        null,
        2,
      )}\n`,
      { mode: 0o600 },
    );
    const mcp = join(root, 'mcp');
    const servers = options.mcp ?? new Map<string, readonly StandInTool[]>();
    if (servers.size > 0) {
      mkdirSync(mcp, { mode: 0o700 });
      writeFileSync(join(mcp, 'stand-in.mjs'), standInScript(), { mode: 0o600 });
      const files = new Map<string, string>();
      for (const [name, tools] of servers) {
        const file = join(mcp, `tools-${files.size}.json`);
        writeFileSync(file, JSON.stringify({ name, tools }), { mode: 0o600 });
        files.set(name, file);
      }
      writeFileSync(join(mcp, 'config.json'), mcpConfig(files, join(mcp, 'stand-in.mjs')), { mode: 0o600 });
    }
    const env: Record<string, string> = {
      HOME: home,
      CLAUDE_CONFIG_DIR: config,
      TMPDIR: tmp,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      SHELL: '/bin/sh',
      LANG: process.env.LANG ?? 'C.UTF-8',
      PWD: options.workspace,
      ANTHROPIC_BASE_URL: options.baseURL,
      ANTHROPIC_API_KEY: options.apiKey,
      // Nothing but the model calls leaves the process.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      // As root, bypassPermissions (no prompt to answer: the hook decides) needs it.
      IS_SANDBOX: '1',
      // TodoWrite is only offered with these (2.1.328).
      ...(options.tools?.includes('TodoWrite')
        ? { CLAUDE_CODE_ENABLE_TASKS: '0', CLAUDE_CODE_ENABLE_TODO_TOOLS: '1' }
        : {}),
    };
    const args = [
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'bypassPermissions',
      '--settings',
      settings,
      '--setting-sources',
      '',
      '--strict-mcp-config',
      ...(servers.size > 0 ? ['--mcp-config', join(mcp, 'config.json')] : []),
      ...(options.tools && options.tools.length > 0 ? ['--tools', options.tools.join(',')] : []),
    ];
    return {
      root,
      home,
      hook,
      watchdog,
      settings,
      env,
      args,
      cleanup: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
