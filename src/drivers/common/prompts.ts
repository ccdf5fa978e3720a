// What a real agent is given of a recorded session: the prompts a person typed (each with the recorded model
// turns that answered it, which the agent's steps are compared with), and the calls' paths rebased when the
// session runs in another workspace than the one it was recorded in. The same for every driver.
import type { Message, Part } from '../../model/session.js';
import type { Turn } from '../../model/turns.js';

/**
 * A prompt a person typed, with the recorded model turns that answered it: positions in the list of turns
 * `promptsOf` was given (not Turn.index, which also counts the turns a resumed session inherited).
 */
export interface Prompt {
  text: string;
  turns: number[];
  /** Images the person attached (screenshots), passed to opencode as files. */
  images?: { mediaType: string; data: string }[];
}

/** A message's text parts, joined. */
export function textOf(message: Message): string {
  return message.parts
    .filter((part): part is Extract<Part, { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('\n');
}

/**
 * The session's prompts as they are given to the agent (`opencode run`, `claude -p`): each run of user messages a person typed (text
 * parts, joined). Harness text (injected) and compaction messages are left out: opencode writes its own — its
 * compaction request and "continue" come from opencode when it compacts, not from the user. Each recorded turn
 * belongs to the prompt before it, so the n-th step after a prompt is compared with the n-th recorded turn
 * after it, however many steps the model took before.
 */
export function promptsOf(messages: readonly Message[], own: number, recorded: readonly Turn[]): Prompt[] {
  const prompts: (Prompt & { at: number })[] = [];
  let open = false;
  for (let i = own; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'user' && !message.injected && !message.compaction) {
      const text = textOf(message);
      const images = message.parts.flatMap((part) =>
        part.type === 'image' ? [{ mediaType: part.mediaType, data: part.data }] : [],
      );
      const last = prompts.at(-1);
      // An image sent alone joins the prompt it follows; `opencode run` needs text to start one.
      if (text.trim().length === 0) {
        if (open && last && images.length > 0) last.images = [...(last.images ?? []), ...images];
        continue;
      }
      if (open && last) {
        last.text = `${last.text}\n\n${text}`;
        if (images.length > 0) last.images = [...(last.images ?? []), ...images];
      } else prompts.push({ at: i, text, turns: [], ...(images.length > 0 ? { images } : {}) });
      open = true;
    } else if (message.role === 'assistant') open = false;
  }
  for (const [position, turn] of recorded.entries()) {
    const owner = prompts.findLast((prompt) => prompt.at < turn.messageIndex) ?? prompts[0];
    owner?.turns.push(position);
  }
  return prompts.map(({ at: _, ...prompt }) => prompt);
}

/** String arguments under `from` rewritten under `to` (a workspace that is not where the session was recorded). */
export function rebase(value: unknown, from: string, to: string): unknown {
  if (from === to) return value;
  if (typeof value === 'string') {
    if (value === from) return to;
    return value.startsWith(`${from}/`) ? to + value.slice(from.length) : value;
  }
  if (Array.isArray(value)) return value.map((item) => rebase(item, from, to));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rebase(item, from, to)]));
  }
  return value;
}
