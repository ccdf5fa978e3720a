// A small Gemini CLI 0.61 session file, written as the real CLI writes one (see
// test/fixtures/real/gemini-cli-0.61.0): a header, message records keyed by `id` (a `gemini` message written
// once with its text, then again with its `toolCalls` and their `functionResponse` results), the results once
// more as a `user` message, under `<home>/.gemini/tmp/<slug>/chats/session-<minute>-<id8>.jsonl` with the
// slug folder's `.project_root` naming the workspace.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export interface GeminiSessionCall {
  /** The call's id as the model would see it (the log prefixes it with `<name>__`). */
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** What the model was sent as the call's result. */
  output: string;
}

export interface GeminiSessionStep {
  text?: string;
  calls: GeminiSessionCall[];
}

export interface GeminiSession {
  id: string;
  cwd: string;
  /** One or more prompts, each answered by its steps and then `answer`. */
  prompts: { text: string; steps: GeminiSessionStep[]; answer: string }[];
  model?: string;
}

export function geminiSessionLines(session: GeminiSession): string[] {
  const lines: string[] = [];
  const start = Date.parse('2026-12-01T10:00:00.000Z');
  let n = 0;
  const at = () => new Date(start + ++n * 1000).toISOString();
  const write = (record: Record<string, unknown>) => lines.push(JSON.stringify(record));
  const model = session.model ?? 'gemini-2.5-flash';
  const tokens = { input: 1000, output: 20, cached: 0, thoughts: 0, tool: 0, total: 1020 };
  const first = at();
  write({
    sessionId: session.id,
    projectHash: createHash('sha256').update(session.cwd).digest('hex'),
    startTime: first,
    lastUpdated: first,
    kind: 'main',
  });
  let messages = 0;
  const id = () => `00000000-0000-4000-9000-${String(++messages).padStart(12, '0')}`;
  for (const prompt of session.prompts) {
    write({ id: id(), timestamp: at(), type: 'user', content: [{ text: prompt.text }] });
    for (const step of prompt.steps) {
      const message = {
        id: id(),
        timestamp: at(),
        type: 'gemini',
        content: step.text ?? '',
        thoughts: [],
        tokens,
        model,
      };
      write(message);
      const responses = step.calls.map((call) => ({
        functionResponse: {
          id: `${call.name}__${call.id}`,
          name: call.name,
          response: { output: call.output },
        },
      }));
      write({
        ...message,
        toolCalls: step.calls.map((call, index) => ({
          id: `${call.name}__${call.id}`,
          name: call.name,
          args: call.args,
          result: [responses[index]],
          status: 'success',
          timestamp: message.timestamp,
          resultDisplay: '',
        })),
      });
      write({ id: id(), timestamp: at(), type: 'user', content: responses });
    }
    write({ id: id(), timestamp: at(), type: 'gemini', content: prompt.answer, thoughts: [], tokens, model });
  }
  return lines;
}

/** Writes the session under `home` as Gemini CLI would; returns the file. */
export function writeGeminiSession(home: string, session: GeminiSession): string {
  const slug = basename(session.cwd);
  const folder = join(home, '.gemini', 'tmp', slug);
  mkdirSync(join(folder, 'chats'), { recursive: true });
  writeFileSync(join(folder, '.project_root'), session.cwd);
  writeFileSync(
    join(home, '.gemini', 'projects.json'),
    JSON.stringify({ projects: { [session.cwd]: slug } }, null, 2),
  );
  const file = join(folder, 'chats', `session-2026-12-01T10-00-${session.id.slice(0, 8)}.jsonl`);
  writeFileSync(file, `${geminiSessionLines(session).join('\n')}\n`);
  return file;
}
