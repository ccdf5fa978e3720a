// What a Qwen Code session file does not hold of the requests its model received, per turn: `stats --fidelity`
// says it (the log has the conversation only).
import type { Message } from '../../model/session.js';

/** Sent with every request, logged nowhere in the session file. */
export const qwenNotLogged: readonly string[] = [
  'the system prompt (Qwen Code’s, about 30 KB)',
  'the tool definitions',
  'the <system-reminder> blocks of the first user message (skills list, environment and folder tree, deferred tools) and the date reminder of the latest prompt',
  'the request parameters (model, max_tokens, …)',
];

/** What the turn with this context was sent that the log lacks (the same for every turn: the conversation is whole). */
export function qwenNotRebuilt(_context: readonly Message[]): string[] {
  return [...qwenNotLogged];
}
