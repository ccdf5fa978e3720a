// Writes a Codex CLI 0.169 rollout file (`$CODEX_HOME/sessions/…/rollout-….jsonl`) of a scripted session, in
// the shape the real binary writes (test/fixtures/real/codex-0.169.0): session_meta with base_instructions,
// turn_context, the prompt as a user item mirrored by an item_completed UserMessage, each step's calls
// (function calls, or free-form custom calls such as apply_patch) and their outputs, the final answer.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface RolloutCall {
  id: string;
  name: string;
  /** A function call's arguments (sent as JSON text). */
  arguments?: unknown;
  /** A free-form call's raw input (apply_patch). */
  input?: string;
  output: string;
}

export interface RolloutSession {
  /** A thread id (a UUID). */
  id: string;
  cwd: string;
  prompt: string;
  steps: { calls: RolloutCall[]; usage?: { input: number; output: number } }[];
  answer: string;
  model?: string;
}

/** The rollout's lines. */
export function rolloutLines(session: RolloutSession): string[] {
  const lines: unknown[] = [];
  let ordinal = 0;
  let clock = Date.parse('2026-12-01T10:00:00.000Z');
  const line = (type: string, payload: unknown) => {
    clock += 10;
    lines.push({ timestamp: new Date(clock).toISOString(), ordinal: ordinal++, type, payload });
  };
  const turnId = `${session.id.slice(0, 24)}turn00000001`;
  const model = session.model ?? 'gpt-5.5';
  line('session_meta', {
    session_id: session.id,
    id: session.id,
    timestamp: new Date(clock).toISOString(),
    cwd: session.cwd,
    originator: 'codex_exec',
    cli_version: '0.169.0',
    source: 'exec',
    model_provider: 'local',
    base_instructions: { text: 'You are Codex, a coding agent based on GPT-5.' },
    history_mode: 'paginated',
  });
  line('turn_context', { turn_id: turnId, cwd: session.cwd, approval_policy: 'never', model });
  line('response_item', {
    type: 'message',
    role: 'user',
    content: [{ type: 'input_text', text: session.prompt }],
  });
  line('event_msg', {
    type: 'item_completed',
    thread_id: session.id,
    turn_id: turnId,
    item: { type: 'UserMessage', id: `${session.id}-u`, content: [{ type: 'text', text: session.prompt }] },
  });
  let input = 0;
  let output = 0;
  for (const step of session.steps) {
    for (const call of step.calls)
      line(
        'response_item',
        call.input !== undefined
          ? {
              type: 'custom_tool_call',
              status: 'completed',
              call_id: call.id,
              name: call.name,
              input: call.input,
            }
          : {
              type: 'function_call',
              status: 'completed',
              name: call.name,
              arguments: JSON.stringify(call.arguments ?? {}),
              call_id: call.id,
            },
      );
    input += step.usage?.input ?? 1000;
    output += step.usage?.output ?? 20;
    line('event_msg', {
      type: 'token_count',
      info: {
        total_token_usage: {
          input_tokens: input,
          cached_input_tokens: 0,
          output_tokens: output,
          total_tokens: input + output,
        },
        last_token_usage: {
          input_tokens: step.usage?.input ?? 1000,
          cached_input_tokens: 0,
          output_tokens: step.usage?.output ?? 20,
          total_tokens: (step.usage?.input ?? 1000) + (step.usage?.output ?? 20),
        },
      },
    });
    for (const call of step.calls)
      line('response_item', {
        type: call.input !== undefined ? 'custom_tool_call_output' : 'function_call_output',
        call_id: call.id,
        output: call.output,
      });
  }
  line('response_item', {
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: session.answer }],
    phase: 'final_answer',
  });
  line('event_msg', { type: 'task_complete', turn_id: turnId, last_agent_message: session.answer });
  return lines.map((value) => JSON.stringify(value));
}

/** Writes the session under `sessionsDir` as Codex names its files; returns the file's path. */
export function writeRollout(sessionsDir: string, session: RolloutSession): string {
  const file = join(sessionsDir, '2026', '12', '01', `rollout-2026-12-01T10-00-00-${session.id}.jsonl`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${rolloutLines(session).join('\n')}\n`);
  return file;
}
