// What a forced turn is asked with: the system prompt, the tools and the messages, in chat form and, for an
// agent that speaks another wire, on that wire too. The recording decides wherever it can — the agent's own
// request record of the turn, else its recorded system prompt — and our catalogue fills only what it lacks;
// the pair says which (`PairSources`). Pure: no I/O.

import type { TurnRequest } from '../model/request.js';
import type { Message, Session } from '../model/session.js';
import { catalogue, toolListOf } from './catalogue/index.js';
import type { ToolSpec } from './catalogue/types.js';
import { type ChatMessage, type ChatTool, chatMessages, chatTools } from './chat.js';
import { type ElideOptions, elideRepeats, type ResultFate } from './elide.js';
import { perList } from './memo.js';
import type { PairSources } from './pairs.js';
import { responsesTools, responsesWire } from './responses.js';
import {
  type AnthropicWire,
  anthropicTools,
  chatFromWire,
  chatToolsOf,
  conversationWire,
  elideWire,
  recordedWire,
  systemText,
  type Wire,
  withSystem,
} from './wire.js';

export interface AskedWith {
  messages: ChatMessage[];
  tools: ChatTool[];
  sources: PairSources;
  /** Call ids whose result, as shown, was an error. */
  errors: string[];
  wire?: Wire;
  /** What `--elide-repeats` / `--max-result-bytes` did to each result shown. */
  fates: ResultFate[];
}

/**
 * The session's recorded system prompt: a system message the log put before everything else (Codex's
 * instructions, docker-agent's agent prompt). Rendered harness text (Claude Code's attachments) is not one:
 * it stays where it was in the conversation.
 */
export function recordedSystemPrompt(session: Session): Message | undefined {
  const first = session.messages[0];
  return first?.role === 'system' && first.attachment === undefined ? first : undefined;
}

/**
 * The context a turn is asked with in chat form: the system prompt first — `systemPrompt` if given, else the
 * recorded one, else the catalogue's —, then what the model saw. The recorded prompt goes first even after a
 * compaction, where the context itself no longer holds it (every request of the agent still carried it).
 */
export function requestMessages(
  session: Session,
  seen: readonly Message[],
  systemPrompt?: string,
): ChatMessage[] {
  const recorded = recordedSystemPrompt(session);
  const context = sharedChat(recorded ? seen.filter((message) => message !== recorded) : seen);
  const system =
    systemPrompt ??
    (recorded ? chatMessages([recorded])[0]?.content : undefined) ??
    catalogue(session.agent).systemPrompt;
  return [{ role: 'system', content: typeof system === 'string' ? system : '' }, ...context];
}

const chatOf = new WeakMap<Message, ChatMessage[]>();

/**
 * `chatMessages(messages)`, each stored message converted once: consecutive turns of a session share their
 * context's messages, so a turn converts only what is new to it (and its messages' JSON is made once too,
 * `itemsJson`). The chat messages are shared between turns and never changed.
 */
function sharedChat(messages: readonly Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const message of messages) {
    let chat = chatOf.get(message);
    if (chat === undefined) {
      chat = chatMessages([message]);
      chatOf.set(message, chat);
    }
    for (const item of chat) out.push(item);
  }
  return out;
}

/** Where a pair's system prompt came from when no request record gives it. */
function systemSource(session: Session, systemPrompt: string | undefined): PairSources['system'] {
  if (systemPrompt !== undefined) return 'option';
  return recordedSystemPrompt(session) ? 'recorded' : 'catalogue';
}

function erroredResults(context: readonly Message[]): string[] {
  const ids: string[] = [];
  for (const message of context)
    for (const part of message.parts) if (part.type === 'tool_result' && part.isError) ids.push(part.callId);
  return ids;
}

/** Does the request record know the system blocks and tools (its shape was found)? */
export function hasShape(request: TurnRequest | undefined): request is TurnRequest {
  return request !== undefined && !request.missing.some((hash) => hash.startsWith('shape:'));
}

export interface AskOptions {
  /** The agent's request record of this turn (Claude Code 2.1.3xx), if it wrote one. */
  recorded?: TurnRequest;
  /** `--system-prompt`: replaces the recorded prompt. */
  systemPrompt?: string;
  shown?: ElideOptions;
  /** The catalogue's tools for this session (`sharedToolsFor`: never changed), used where nothing recorded says. */
  catalogueTools: readonly ToolSpec[];
}

// Converted once per session's list rather than once per turn (see `perList`).
const catalogueChatTools = perList<readonly ToolSpec[], ChatTool[]>(chatTools);
const chatToolsOnce = perList<readonly unknown[], ChatTool[]>(chatToolsOf);
const anthropicToolsOnce = perList<readonly ToolSpec[], unknown[]>(anthropicTools);
const responsesToolsOnce = perList<readonly ToolSpec[], unknown[]>(responsesTools);

/**
 * A forced turn's request. With an exact request record, it is that request (system blocks, tools, messages
 * as sent, harness text included), in chat form and as the wire body; with a partial one, the recorded system
 * and tools around the stored conversation; without one, the stored conversation with the recorded or the
 * catalogue's system prompt and the catalogue's tools. A Claude Code turn always carries its Anthropic body.
 */
export function askedWith(session: Session, context: readonly Message[], options: AskOptions): AskedWith {
  const { recorded, systemPrompt, shown } = options;
  if (recorded?.fidelity === 'exact') {
    let wire = recordedWire(recorded);
    if (systemPrompt !== undefined) wire = withSystem(wire, systemPrompt);
    let fates: ResultFate[] = [];
    if (shown) ({ wire, fates } = elideWire(wire, shown));
    const chat = chatFromWire(wire);
    return {
      messages: chat.messages,
      tools: chat.tools,
      errors: chat.errors,
      sources: { system: systemPrompt !== undefined ? 'option' : 'recorded', tools: 'recorded' },
      wire,
      fates,
    };
  }
  const { messages: seen, fates } = shown
    ? elideRepeats(context, shown)
    : { messages: [...context], fates: [] };
  const shape = hasShape(recorded) ? recorded : undefined;
  const messages = requestMessages(
    session,
    seen,
    systemPrompt ?? (shape ? systemText(shape.system) : undefined),
  );
  const tools = shape ? chatToolsOnce(shape.tools) : catalogueChatTools(options.catalogueTools);
  const sources: PairSources = {
    system: shape && systemPrompt === undefined ? 'recorded' : systemSource(session, systemPrompt),
    tools: shape ? 'recorded' : 'catalogue',
    ...(shape ? {} : { tool_list: toolListOf(session).name }),
  };
  const out: AskedWith = { messages, tools, sources, errors: erroredResults(seen), fates };
  if (session.agent === 'claude-code') {
    const prompt = recordedSystemPrompt(session);
    const system: AnthropicWire['body']['system'] =
      systemPrompt !== undefined
        ? systemPrompt
        : shape
          ? shape.system
          : typeof messages[0]?.content === 'string'
            ? messages[0].content
            : '';
    const { betas, ...params } = shape?.params ?? {};
    out.wire = conversationWire(
      prompt ? seen.filter((message) => message !== prompt) : seen,
      system,
      shape ? shape.tools : anthropicToolsOnce(options.catalogueTools),
      params,
    );
    if (Array.isArray(betas))
      out.wire.betas = betas.filter((beta): beta is string => typeof beta === 'string');
  }
  // Codex: the Responses input it sends, item for item (its instructions are the first developer item).
  if (session.agent === 'codex') out.wire = responsesWire(seen, responsesToolsOnce(options.catalogueTools));
  return out;
}
