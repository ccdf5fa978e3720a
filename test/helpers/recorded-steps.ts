// A recorded session as a scripted model's script: per prompt the user typed, the recorded answers in order
// (text, reasoning, tool calls with their recorded ids), up to the first that calls no tool; and every
// recorded result, in order, as text. What the driver tests play back to a real agent.

import { promptsOf } from '../../src/drivers/common/prompts.js';
import type { Message } from '../../src/model/session.js';
import { outputText } from '../../src/model/session.js';
import { turns } from '../../src/model/turns.js';
import { assistantMessage } from '../../src/replay/chat.js';
import type { ScriptedReply } from './model-server.js';

export function recordedSteps(
  messages: readonly Message[],
  own: number,
): { steps: ScriptedReply[][]; results: { output: string; isError: boolean }[] } {
  const recorded = [...turns(messages, own)];
  const steps = promptsOf(messages, own, recorded).map((prompt) => {
    const replies: ScriptedReply[] = [];
    for (const index of prompt.turns) {
      const message = assistantMessage((recorded[index] as (typeof recorded)[number]).response);
      replies.push({
        ...(message.content ? { text: message.content } : {}),
        ...(message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
        toolCalls: (message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: JSON.parse(call.function.arguments) as unknown,
        })),
      });
      if (!message.tool_calls?.length) break;
    }
    return replies;
  });
  const results = recorded.flatMap((turn) =>
    turn.results.map((result) => ({ output: outputText(result.output), isError: result.isError })),
  );
  return { steps, results };
}
