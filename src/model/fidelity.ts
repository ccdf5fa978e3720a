// How faithfully a turn's context could be rebuilt, and what of the request the model received is not known.
// Pure: it looks at a turn and the request the log recorded for it, if any.

import { messageHash, type TurnRequest } from './request.js';
import type { Turn } from './turns.js';

/**
 * `exact`: the request as sent, from the agent's request records, every message found; `partial`: from request
 * records, but some messages could not be found; `attachments`: the conversation with the harness text the
 * agent logged as rendered attachments placed where it put them; `conversation`: the conversation alone.
 */
export type Rebuilt = 'exact' | 'partial' | 'attachments' | 'conversation';

export interface TurnFidelity {
  /** 1-based, as `show --turn` and a pairs file number it. */
  turn: number;
  rebuilt: Rebuilt;
  /** With request records: how many of the rebuilt messages hash to the tail hash they were recorded under. */
  tail?: { messages: number; matching: number };
  /** Tail hashes (or the base or shape) that resolved to nothing. */
  missing: string[];
  /** What the model was sent that this rebuild does not hold. */
  notRebuilt: string[];
}

const withoutRecords = [
  'the system prompt',
  'the tool definitions',
  'the request parameters (model, max_tokens, thinking, …)',
];

export function turnFidelity(turn: Turn, request: TurnRequest | undefined): TurnFidelity {
  const number = turn.index + 1;
  if (request) {
    let matching = 0;
    for (const message of request.messages) {
      const wire = { role: message.role, content: message.content, ...(message.extra ?? {}) };
      if (messageHash(wire) === message.hash) matching++;
    }
    const exact = request.fidelity === 'exact' && matching === request.messages.length;
    return {
      turn: number,
      rebuilt: exact ? 'exact' : 'partial',
      tail: { messages: request.messages.length, matching },
      missing: request.missing,
      notRebuilt:
        request.missing.length > 0 ? [`${request.missing.length} message(s) whose hash names nothing`] : [],
    };
  }
  const attachments = turn.context.some((message) => message.attachment !== undefined);
  return {
    turn: number,
    rebuilt: attachments ? 'attachments' : 'conversation',
    missing: [],
    notRebuilt: attachments
      ? [...withoutRecords, 'how the harness merged messages (its text and parallel results in one message)']
      : [
          ...withoutRecords,
          'harness text the log does not hold (reminders, mid-conversation system messages)',
        ],
  };
}
