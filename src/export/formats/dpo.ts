// TRL preference rows (conversational, explicit prompt): the context, the original turn as `chosen` and the
// replayed turn as `rejected`, in the same message shape as the trl format.
import { canonicalJson } from '../../model/canonical-json.js';
import type { AssistantMessage, Format, Sample } from '../sample.js';
import { functionTool, rawCallReason, withWarnings } from './common.js';
import { trlAssistant, trlMessage } from './trl.js';

/** A turn's text and calls, without the call ids a replay mints afresh or the order of argument keys. */
function said(m: AssistantMessage): string {
  return canonicalJson([m.content, m.calls.map((c) => [c.name, c.raw ?? c.arguments])]);
}

const onlyReasoning =
  'chosen and rejected differ only in reasoning, which many chat templates do not render (the pair then teaches nothing)';

export const dpo: Format = {
  name: 'dpo',
  render(sample: Sample) {
    const pair = sample.preference;
    if (!pair) return { skip: 'no preference pair: dpo rows come from a replay run' };
    if (sample.messages.length === 0) return { skip: 'the prompt is empty' };
    const raw = rawCallReason(sample, 'TRL needs them as an object');
    if (raw) return { skip: raw };
    // The builder pairs only turns that differ; a pair that does not would train on two identical sequences.
    const sameWords = said(pair.chosen) === said(pair.rejected);
    if (sameWords && (pair.chosen.reasoning ?? '') === (pair.rejected.reasoning ?? '')) {
      return { skip: 'the original and replayed turns are the same' };
    }
    const row = {
      prompt: sample.messages.map(trlMessage),
      chosen: [trlAssistant(pair.chosen)],
      rejected: [trlAssistant(pair.rejected)],
      tools: sample.tools.map(functionTool),
    };
    return withWarnings(row, [sameWords ? onlyReasoning : undefined]);
  },
};
