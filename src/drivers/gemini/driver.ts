// `replay --agent gemini`: a recorded Gemini CLI session through the real Gemini CLI — its own prompt, tools and
// loop — with every tool call denied by the BeforeTool hook and answered from the recording at the proxy, by the
// id the proxy gave the call. One headless `gemini` run per prompt the user typed (the prompt on stdin), the first
// with `--session-id` of ours, the later ones `--resume` of it; each agent step a pair, its request as Gemini CLI
// sent it, in the chat form pairs hold. The loop is the Gemini CLI lineage's (common/headless.ts, shared with
// Qwen Code); what is Gemini's own is here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type HeadlessAgent, type HeadlessReplay, replayHeadless } from '../common/headless.js';
import { type GeminiRequest, geminiChat } from '../wire/gemini.js';
import { prepareGeminiEnvironment } from './environment.js';
import { type GeminiExchange, startGeminiProxy } from './proxy.js';

export type GeminiModel =
  | { kind: 'recorded' }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export type GeminiReplay = Omit<HeadlessReplay<GeminiRequest>, 'upstream'> & { upstream: GeminiModel };

/** The model Gemini CLI is told when the recording names none (`--model`: its router is then not asked). */
export const defaultModel = 'gemini-2.5-pro';

/** What a recorded model answers a side call with (it is no turn of the session). */
export const sideAnswer = 'Nothing to add.';

/** A workspace whose own settings would run (its hooks, MCP servers) or switch our hook off: Gemini reads it. */
export function workspaceSettings(workspace: string): string | undefined {
  const file = join(workspace, '.gemini', 'settings.json');
  return existsSync(file) ? file : undefined;
}

/** The `--output-format json` result: `{session_id, response, stats}`, with `error` when the run failed. */
export function outcomeOf(stdout: string): { failed: boolean; said?: string } | undefined {
  const text = stdout.trim();
  let result: { error?: { message?: unknown } | null; response?: unknown } | undefined;
  try {
    result = JSON.parse(text.slice(text.indexOf('{'))) as typeof result;
  } catch {
    return undefined;
  }
  if (!result || typeof result !== 'object') return undefined;
  if (result.error) {
    const message =
      typeof result.error.message === 'string' ? result.error.message : JSON.stringify(result.error);
    return { failed: true, said: message };
  }
  return { failed: false };
}

/** Gemini CLI as an agent of the lineage. */
export const geminiAgent: HeadlessAgent<GeminiRequest, GeminiExchange> = {
  command: 'gemini',
  natives: ['gemini'],
  defaultModel,
  projectSettings: workspaceSettings,
  projectSettingsWhy:
    "Gemini CLI's project settings (its hooks and MCP servers would run, and it can switch hooks off)",
  startProxy: startGeminiProxy,
  prepareEnvironment: prepareGeminiEnvironment,
  sessionArgs: (index, chat) => (index === 0 ? ['--session-id', chat] : ['--resume', chat]),
  outcome: outcomeOf,
  noise:
    /^(Warning: 256-color|YOLO mode is enabled|Ripgrep is not available|Error executing tool .*Tool execution blocked)/,
  pairOf: (exchange) => geminiChat(exchange.request),
  sideAnswer,
};

export async function replayGemini(run: GeminiReplay): Promise<void> {
  await replayHeadless(run, geminiAgent);
}
