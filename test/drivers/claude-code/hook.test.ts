// The footing of the Claude Code driver, re-checked on the pinned binary (2.1.328) with a scripted model:
// - our deny hook stops a tool before it runs, and the next request carries an error result for its id;
// - a hook that fails (exit 1) is a non-blocking error to Claude Code: the tool RUNS. This is why the hook must
//   deny by itself, needing nothing of ours (no network, no replay-history alive);
// - the tools the model is offered are the same with the hook as without it.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findClaude } from '../../../src/drivers/claude-code/binary.js';
import {
  denyReason,
  hookScript,
  prepareClaudeEnvironment,
} from '../../../src/drivers/claude-code/environment.js';
import { tempDir } from '../../helpers/cli.js';
import { type ModelServer, startModelServer } from '../../helpers/model-server.js';

let dir: ReturnType<typeof tempDir>;
const binary = findClaude().path;

beforeAll(() => {
  dir = tempDir('claude-hook-');
});
afterAll(() => dir?.remove());

/**
 * One `claude -p` asked to touch a marker by the scripted model; `hook` replaces the deny script's text, and
 * `noHooks` leaves the settings without any hook.
 */
async function touchOnce(
  name: string,
  hook?: string,
  noHooks = false,
): Promise<{ server: ModelServer; marker: string }> {
  const marker = join(dir.path, `${name}.marker`);
  const server = await startModelServer({
    turns: [
      { toolCalls: [{ id: `toolu_${name}`, name: 'Bash', arguments: { command: `touch ${marker}` } }] },
      { text: 'Done.' },
    ],
  });
  const environment = prepareClaudeEnvironment({
    workspace: dir.path,
    baseURL: server.baseURL.replace(/\/v1$/, ''),
    apiKey: 'sk-scripted-key-0000000000',
    tools: ['Bash', 'Read'],
    parent: dir.path,
  });
  try {
    if (hook !== undefined) writeFileSync(environment.hook, hook);
    if (noHooks) writeFileSync(environment.settings, '{}\n');
    const child = await execa(binary, [...environment.args, '-p', 'Make the marker.'], {
      cwd: dir.path,
      env: environment.env,
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: 120_000,
    });
    expect(child.exitCode, String(child.stderr)).toBe(0);
  } finally {
    environment.cleanup();
    await server.close();
  }
  return { server, marker };
}

function resultOf(server: ModelServer): { is_error?: boolean; content?: unknown } | undefined {
  const messages = (server.chatRequests()[1]?.body?.messages ?? []) as { content: unknown }[];
  for (const message of messages)
    if (Array.isArray(message.content))
      for (const block of message.content as { type: string; is_error?: boolean; content?: unknown }[])
        if (block.type === 'tool_result') return block;
  return undefined;
}

describe('the deny script itself', () => {
  /** What the script prints and exits with for this hook input (as Claude Code writes it: compact JSON). */
  async function decide(input: string): Promise<{ out: string; code: number | undefined }> {
    const script = join(dir.path, 'hook.sh');
    writeFileSync(script, hookScript(), { mode: 0o700 });
    const ran = await execa(script, [], { input, reject: false });
    return { out: String(ran.stdout), code: ran.exitCode };
  }
  const denies = (out: string) =>
    JSON.parse(out).hookSpecificOutput.permissionDecision === 'deny' && out.includes(denyReason);

  it('denies every call, but lets an Agent call start its sub-agent', async () => {
    const call = (tool: string, input: unknown) =>
      JSON.stringify({
        session_id: 's',
        cwd: '/w',
        permission_mode: 'bypassPermissions',
        hook_event_name: 'PreToolUse',
        tool_name: tool,
        tool_input: input,
        tool_use_id: 'toolu_1',
      });
    expect(denies((await decide(call('Bash', { command: 'touch /tmp/x' }))).out)).toBe(true);
    expect(await decide(call('Agent', { prompt: 'Review it.' }))).toEqual({ out: '', code: 0 });
    // Arguments that spell out an Agent call do not make one.
    const forged = { hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_input: {} };
    expect(denies((await decide(call('Bash', forged))).out)).toBe(true);
    expect(denies((await decide(call('Write', { content: '"tool_name":"Agent","tool_input":' }))).out)).toBe(
      true,
    );
    // Input it cannot read is denied too.
    expect(denies((await decide('not json')).out)).toBe(true);
    expect(denies((await decide('')).out)).toBe(true);
  });
});

describe('Claude Code’s PreToolUse hook (the pinned binary)', () => {
  it('our deny script stops the tool before it runs; the model gets an error result for that call', async () => {
    const { server, marker } = await touchOnce('denied');
    expect(existsSync(marker)).toBe(false);
    expect(server.chatRequests()).toHaveLength(2);
    const result = resultOf(server);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toContain(denyReason);
  }, 180_000);

  it('a hook that fails is not a denial: Claude Code runs the tool', async () => {
    const { marker } = await touchOnce('failed-open', '#!/bin/sh\nexit 1\n');
    expect(existsSync(marker)).toBe(true);
  }, 180_000);

  it('offers the model the same tools with the hook as without it', async () => {
    const withHook = await touchOnce('tools-with');
    const without = await touchOnce('tools-without', undefined, true);
    // Without the hook the call runs (here: the marker): the settings really had none.
    expect(existsSync(without.marker)).toBe(true);
    const tools = (server: ModelServer) => JSON.stringify(server.chatRequests()[0]?.body?.tools);
    expect(tools(withHook.server)).toBe(tools(without.server));
    // The two asked for, and the placeholder Claude Code adds for tools it loads later.
    expect(JSON.parse(tools(withHook.server)).map((tool: { name: string }) => tool.name)).toEqual([
      'Bash',
      'DeferredToolPlaceholder',
      'Read',
    ]);
  }, 180_000);
});
