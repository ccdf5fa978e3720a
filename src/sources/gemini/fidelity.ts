// What a Gemini CLI session log does not hold of the requests its model received, per turn: `stats --fidelity`
// says it (the log has the conversation only; the requests are in test/fixtures/real/gemini-cli-0.61.0/).
import type { Message } from '../../model/session.js';

/** Sent with every agent turn, logged nowhere in the session file. */
export const geminiNotLogged: readonly string[] = [
  'the system instruction (Gemini CLI’s, about 32 KB: approval mode, skills, sub-agents)',
  'the tool declarations (functionDeclarations)',
  'the generation config (temperature, topP, topK, thinkingConfig)',
  'the thought signatures of the function calls',
];

/**
 * What the turn with this context was sent that the log lacks: after a resume of an uncompressed history, the
 * earlier results the CLI sends a second time too (its bug; the store keeps each once).
 */
export function geminiNotRebuilt(context: readonly Message[]): string[] {
  const compressed = context.some((message) => message.compaction && message.attachment === undefined);
  const resumed = context.some((message) => message.compaction && message.attachment === 'session_context');
  // A compressed history holds its tool results as parts only: those the CLI does not send twice.
  return resumed && !compressed
    ? [...geminiNotLogged, 'the tool results of the resumed history sent a second time (a Gemini CLI bug)']
    : [...geminiNotLogged];
}
