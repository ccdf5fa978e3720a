// A small Qwen Code 0.24 session file, written as the real CLI writes one (see
// test/fixtures/real/qwen-code-0.24.4): uuid/parentUuid records, Gemini-shaped `message.parts`, a tool_result
// record per call, under `<home>/.qwen/projects/<cwd slug>/chats/<sessionId>.jsonl`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface QwenSessionCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** What the model was sent as the call's result. */
  output: string;
}

export interface QwenSessionStep {
  text?: string;
  calls: QwenSessionCall[];
}

export interface QwenSession {
  id: string;
  cwd: string;
  /** One or more prompts, each answered by its steps and then `answer`. */
  prompts: { text: string; steps: QwenSessionStep[]; answer: string }[];
  model?: string;
}

export function qwenSessionLines(session: QwenSession): string[] {
  const lines: string[] = [];
  let parent: string | null = null;
  let n = 0;
  const at = Date.parse('2026-12-01T10:00:00.000Z');
  const record = (fields: Record<string, unknown>): void => {
    n++;
    const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    lines.push(
      JSON.stringify({
        uuid,
        parentUuid: parent,
        sessionId: session.id,
        timestamp: new Date(at + n * 1000).toISOString(),
        cwd: session.cwd,
        version: '0.24.4',
        ...fields,
      }),
    );
    parent = uuid;
  };
  const model = session.model ?? 'qwen3-coder-plus';
  const turn = (parts: unknown[]): void =>
    record({ type: 'assistant', provenance: 'assistant_output', model, message: { role: 'model', parts } });
  for (const prompt of session.prompts) {
    record({
      type: 'user',
      provenance: 'real_user',
      message: { role: 'user', parts: [{ text: prompt.text }] },
    });
    for (const step of prompt.steps) {
      turn([
        ...(step.text ? [{ text: step.text }] : []),
        ...step.calls.map((call) => ({ functionCall: { id: call.id, name: call.name, args: call.args } })),
      ]);
      for (const call of step.calls)
        record({
          type: 'tool_result',
          provenance: 'tool_result',
          message: {
            role: 'user',
            parts: [
              { functionResponse: { id: call.id, name: call.name, response: { output: call.output } } },
            ],
          },
          toolCallResult: {
            callId: call.id,
            status: 'success',
            resultDisplay: '',
            executionStatus: 'success',
          },
        });
    }
    turn([{ text: prompt.answer }]);
  }
  return lines;
}

/** Writes the session under `home/.qwen/projects/<slug>/chats/`; returns the projects directory. */
export function writeQwenSession(home: string, session: QwenSession): string {
  const projects = join(home, '.qwen', 'projects');
  const chats = join(projects, session.cwd.replace(/[^A-Za-z0-9]/g, '-'), 'chats');
  mkdirSync(chats, { recursive: true });
  writeFileSync(join(chats, `${session.id}.jsonl`), `${qwenSessionLines(session).join('\n')}\n`);
  return projects;
}
