import { writeFileSync } from 'node:fs';

/** A tool call in a hand-made Claude Code transcript, with the result that was recorded for it. */
export interface ScriptedStep {
  text?: string;
  calls?: { id: string; name: string; input: Record<string, unknown>; result: string; isError?: boolean }[];
}

/**
 * Writes a small Claude Code transcript: one user prompt, then the assistant steps with their recorded tool
 * results, then a final answer. Enough to replay; the real format's quirks are tested elsewhere.
 */
export function writeTranscript(
  file: string,
  options: { sessionId: string; cwd: string; prompt: string; steps: ScriptedStep[]; answer: string },
): void {
  const lines: unknown[] = [];
  let parent: string | null = null;
  let n = 0;
  const stamp = () => new Date(Date.UTC(2026, 0, 1, 10, 0, n)).toISOString();
  const envelope = (type: string, extra: Record<string, unknown>) => {
    n++;
    const uuid = `${options.sessionId.slice(0, 8)}-${n}`;
    lines.push({
      type,
      uuid,
      parentUuid: parent,
      sessionId: options.sessionId,
      cwd: options.cwd,
      version: '2.1.50',
      timestamp: stamp(),
      isSidechain: false,
      ...extra,
    });
    parent = uuid;
  };
  envelope('user', { message: { role: 'user', content: options.prompt } });
  options.steps.forEach((step, index) => {
    const content: unknown[] = [];
    if (step.text) content.push({ type: 'text', text: step.text });
    for (const call of step.calls ?? [])
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    envelope('assistant', {
      message: {
        id: `msg_${index}`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content,
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    });
    for (const call of step.calls ?? []) {
      envelope('user', {
        message: {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: call.id,
              content: call.result,
              ...(call.isError ? { is_error: true } : {}),
            },
          ],
        },
      });
    }
  });
  envelope('assistant', {
    message: {
      id: 'msg_final',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: options.answer }],
      usage: { input_tokens: 10, output_tokens: 5 },
    },
  });
  writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
}
