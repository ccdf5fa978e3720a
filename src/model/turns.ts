import { type Message, type ToolCall, type ToolResult, toolCalls, toolResults } from './session.js';

/** One model call: what the model was shown, what it answered, and the recorded results of its tool calls. */
export interface Turn {
  /** 0-based among the turns of the session. */
  index: number;
  /** Position of the response in the message list it was built from. */
  messageIndex: number;
  /** The context exactly as the model saw it (after a compaction: the summary and what followed). */
  context: Message[];
  response: Message;
  /** One result per tool call of the response, in call order; unanswered calls get a synthetic error. */
  results: ToolResult[];
}

export const unansweredOutput =
  'Tool call interrupted: no result was recorded for this call (the turn was cut off before it finished).';

/** The error result a context gives a call that never got one: providers reject a dangling tool call. */
export function syntheticResult(call: ToolCall): ToolResult {
  return {
    type: 'tool_result',
    callId: call.id,
    name: call.name,
    output: unansweredOutput,
    isError: true,
    synthetic: true,
  };
}

/** Harness-made assistant messages (API error stand-ins) were never model output and were never sent back. */
export function isModelTurn(message: Message): boolean {
  return message.role === 'assistant' && !message.injected;
}

/**
 * The session's turns, one at a time (a long session does not hold every context at once). `messages` is the
 * whole history, inherited messages of a resumed session included; `from` skips turns whose response lies
 * before that index (the inherited ones).
 */
export function* turns(messages: readonly Message[], from = 0): Generator<Turn> {
  let visible: Message[] = [];
  // Unanswered calls of the last model turn, with where that turn came from (for the synthetic result's source).
  let pending: ToolCall[] = [];
  let pendingSource: Message['source'] | undefined;
  const byNativeId = new Map<string, Message>();
  let index = 0;

  const closePending = (): void => {
    if (pending.length === 0 || pendingSource === undefined) return;
    visible.push({ role: 'tool', parts: pending.map(syntheticResult), source: pendingSource });
    pending = [];
  };

  for (let position = 0; position < messages.length; position++) {
    const message = messages[position] as Message;
    // A harness-made assistant message is no turn and is not sent back, unless a compaction keeps it (the
    // fixed acknowledgement of a summary some agents put after it): then it is found by its id.
    if (message.role === 'assistant' && message.injected) {
      if (message.nativeId !== undefined) byNativeId.set(message.nativeId, message);
      continue;
    }
    if (message.role !== 'tool') closePending();

    if (isModelTurn(message)) {
      if (position >= from) {
        yield {
          index: index,
          messageIndex: position,
          context: visible.slice(),
          response: message,
          results: recordedResults(messages, position),
        };
      }
      index++;
    }

    if (message.compaction) {
      // The model no longer sees anything before the summary, except what it preserved: re-anchored after it,
      // or around it where `preserved` names the summary itself (Codex sends it after the items it kept).
      const kept = (message.preserved ?? [])
        .map((id) => (id === message.nativeId ? message : byNativeId.get(id)))
        .filter((m) => m !== undefined);
      visible = kept.includes(message) ? kept : [message, ...kept];
      pending = [];
    } else {
      visible.push(message);
      for (const call of toolCalls(message)) {
        if (call.unanswered) {
          pending.push(call);
          pendingSource = message.source;
        }
      }
    }
    if (message.nativeId !== undefined) byNativeId.set(message.nativeId, message);
  }
}

/** The recorded results of the tool calls of messages[position], looked for up to the next model turn. */
export function recordedResults(messages: readonly Message[], position: number): ToolResult[] {
  const response = messages[position] as Message;
  const calls = toolCalls(response);
  if (calls.length === 0) return [];
  const found = new Map<string, ToolResult>();
  // Server-side tools (web search) are answered inside the response itself.
  for (const result of toolResults(response)) found.set(result.callId, result);
  for (let next = position + 1; next < messages.length; next++) {
    const message = messages[next] as Message;
    if (isModelTurn(message)) break;
    for (const result of toolResults(message))
      if (!found.has(result.callId)) found.set(result.callId, result);
  }
  return calls.map((call) => found.get(call.id) ?? syntheticResult(call));
}

/** All turns at once, for small sessions and tests. */
export function splitTurns(messages: readonly Message[], from = 0): Turn[] {
  return [...turns(messages, from)];
}
