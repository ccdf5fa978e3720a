// `replay --agent qwen`: a recorded Qwen Code session through the real Qwen Code CLI — its own prompt, tools and
// loop — with every tool call denied by the hook and answered from the recording by tool_call_id at the proxy.
// One headless `qwen` run per prompt the user typed (the prompt on stdin), the first with `--session-id` of ours,
// the later ones `--resume` of it; each agent step a pair, its request as Qwen sent it (chat completions). The
// loop is the Gemini CLI lineage's (common/headless.ts); what is Qwen's own is here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../../replay/chat.js';
import { type HeadlessAgent, type HeadlessReplay, replayHeadless } from '../common/headless.js';
import { prepareQwenEnvironment } from './environment.js';
import {
  contentText,
  type QwenExchange,
  type QwenRequest,
  startQwenProxy,
  type WireMessage,
} from './proxy.js';

export type QwenModel =
  | { kind: 'recorded' }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

/** The model name Qwen is told when the recording names none. */
export const defaultModel = 'qwen3-coder-plus';

/** What a recorded model answers the memory extractor with: nothing to keep (it is no turn of the session). */
export const sideAnswer = 'Nothing to save.';

/** A workspace whose own settings would run (its hooks, MCP servers) or switch our hook off: Qwen reads it. */
export function workspaceSettings(workspace: string): string | undefined {
  const file = join(workspace, '.qwen', 'settings.json');
  return existsSync(file) ? file : undefined;
}

/** The request's messages as a pair holds them: Qwen's text-part lists of system and tool messages as text. */
export function pairMessages(messages: readonly WireMessage[]): ChatMessage[] {
  return messages.map((message) =>
    (message.role === 'tool' || message.role === 'system') && typeof message.content !== 'string'
      ? ({ ...message, content: contentText(message.content) } as unknown as ChatMessage)
      : (message as unknown as ChatMessage),
  );
}

export type QwenReplay = Omit<HeadlessReplay<QwenRequest>, 'upstream'> & { upstream: QwenModel };

/** Qwen Code as an agent of the lineage. */
export const qwenAgent: HeadlessAgent<QwenRequest, QwenExchange> = {
  command: 'qwen',
  natives: ['qwen'],
  defaultModel,
  projectSettings: workspaceSettings,
  projectSettingsWhy:
    "Qwen's project settings (its hooks and MCP servers would run, and it can turn hooks off)",
  startProxy: (options) => startQwenProxy({ ...options, answer: (call) => options.answer(call).text }),
  prepareEnvironment: prepareQwenEnvironment,
  sessionArgs: (index, chat) => (index === 0 ? ['--session-id', chat] : ['--resume', chat]),
  outcome: (stdout) => {
    const result = resultEvent(stdout);
    if (!result) return undefined;
    const said =
      typeof result.error === 'string'
        ? result.error
        : typeof result.result === 'string'
          ? result.result
          : '';
    return { failed: result.is_error === true, ...(said ? { said } : {}) };
  },
  noise: /^Ripgrep not available|Falling back to built-in grep/,
  pairOf: (exchange) => ({
    messages: pairMessages(exchange.request.messages),
    tools: (exchange.request.tools ?? []) as ReturnType<
      HeadlessAgent<QwenRequest, QwenExchange>['pairOf']
    >['tools'],
  }),
  sideAnswer,
};

export async function replayQwen(run: QwenReplay): Promise<void> {
  await replayHeadless(run, qwenAgent);
}

/** The `result` event of `--output-format json` (a JSON array of events), or undefined. */
export function resultEvent(stdout: string): { is_error?: boolean; [key: string]: unknown } | undefined {
  const text = stdout.trim();
  let events: unknown;
  try {
    events = JSON.parse(text.slice(text.indexOf('[')));
  } catch {
    return undefined;
  }
  if (!Array.isArray(events)) return undefined;
  return (events as { type?: unknown }[]).findLast((event) => event?.type === 'result') as
    | { is_error?: boolean }
    | undefined;
}
