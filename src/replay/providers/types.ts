import type { Session } from '../../model/session.js';
import type { Turn } from '../../model/turns.js';
import type { ChatMessage, ChatTool } from '../chat.js';
import type { JsonParts } from '../memo.js';
import type { Wire } from '../wire.js';

/** One model call: the context in chat form, the tools offered, and where it came from. */
export interface CompletionRequest {
  messages: ChatMessage[];
  tools: ChatTool[];
  /** The session and the original turn being asked again (what the `recorded` provider answers with). */
  session: Session;
  original?: Turn;
  /** The same request on the agent's own wire (`wire.ts`): a provider speaking that wire sends it as it is. */
  wire?: Wire;
  /**
   * The UTF-8 of `JSON.stringify(messages)`, made once by the engine for the request digest and the pair line: a
   * provider sending the chat messages as they are uses it rather than serialising them again.
   */
  messagesParts?: JsonParts;
}

export interface Completion {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  finishReason?: string;
}

/** A model endpoint. `complete` throws a ProviderError on failure. */
export interface Provider {
  /** As given on the command line: `recorded`, `openai:MODEL`, `anthropic:MODEL`, `ollama:MODEL`. */
  name: string;
  complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion>;
}

/**
 * A model call that failed. `fatal` errors (a wrong key, an unknown model) stop the run early: every other
 * turn would fail the same way.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly fatal = false,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** The `recorded` provider has no recorded turn for this call: the session ends here (not a failure). */
export class RecordingExhausted extends ProviderError {
  constructor() {
    super('the recording has no turn to answer with here');
    this.name = 'RecordingExhausted';
  }
}
