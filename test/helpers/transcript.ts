import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A sub-agent a scripted call starts (`Agent`/`Task`): its own prompt, steps and final report. */
export interface ScriptedAgent {
  id: string;
  prompt: string;
  steps: ScriptedStep[];
  answer: string;
}

/** A tool call in a hand-made Claude Code transcript, with the result that was recorded for it. */
export interface ScriptedStep {
  text?: string;
  calls?: {
    id: string;
    name: string;
    input: Record<string, unknown>;
    result: string;
    isError?: boolean;
    /** The call starts this sub-agent, written to `<session>/subagents/agent-<id>.jsonl` as Claude Code does. */
    agent?: ScriptedAgent;
  }[];
}

/**
 * Writes a small Claude Code transcript: one user prompt, then the assistant steps with their recorded tool
 * results, then a final answer; each sub-agent a call started in a file of its own. Enough to replay; the
 * real format's quirks are tested elsewhere.
 */
export function writeTranscript(
  file: string,
  options: { sessionId: string; cwd: string; prompt: string; steps: ScriptedStep[]; answer: string },
): void {
  const agents: ScriptedAgent[] = [];
  const lines = chain(options, options, undefined, agents);
  writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  for (const agent of agents) {
    const dir = join(file.replace(/\.jsonl$/, ''), 'subagents');
    mkdirSync(dir, { recursive: true });
    const own = chain(options, agent, agent.id, agents);
    writeFileSync(
      join(dir, `agent-${agent.id}.jsonl`),
      `${own.map((line) => JSON.stringify(line)).join('\n')}\n`,
    );
  }
}

function chain(
  session: { sessionId: string; cwd: string },
  options: { prompt: string; steps: ScriptedStep[]; answer: string },
  agentId: string | undefined,
  agents: ScriptedAgent[],
): unknown[] {
  const lines: unknown[] = [];
  let parent: string | null = null;
  let n = 0;
  const prefix = agentId ? `${agentId.slice(0, 6)}` : session.sessionId.slice(0, 8);
  const stamp = () => new Date(Date.UTC(2026, 0, 1, 10, agentId ? 30 : 0, n)).toISOString();
  const envelope = (type: string, extra: Record<string, unknown>) => {
    n++;
    const uuid = `${prefix}-${n}`;
    lines.push({
      type,
      uuid,
      parentUuid: parent,
      sessionId: session.sessionId,
      cwd: session.cwd,
      version: '2.1.50',
      timestamp: stamp(),
      isSidechain: agentId !== undefined,
      ...(agentId ? { agentId } : {}),
      ...extra,
    });
    parent = uuid;
  };
  const msg = (id: string) => (agentId ? `msg_${agentId}_${id}` : `msg_${id}`);
  envelope('user', { message: { role: 'user', content: options.prompt } });
  options.steps.forEach((step, index) => {
    const content: unknown[] = [];
    if (step.text) content.push({ type: 'text', text: step.text });
    for (const call of step.calls ?? [])
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
    envelope('assistant', {
      message: {
        id: msg(String(index)),
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content,
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    });
    for (const call of step.calls ?? []) {
      if (call.agent) agents.push(call.agent);
      envelope('user', {
        message: {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: call.id,
              content: call.agent ? [{ type: 'text', text: call.result }] : call.result,
              ...(call.isError ? { is_error: true } : {}),
            },
          ],
        },
        ...(call.agent
          ? {
              toolUseResult: {
                status: 'completed',
                prompt: call.agent.prompt,
                agentId: call.agent.id,
                content: [{ type: 'text', text: call.result }],
              },
            }
          : {}),
      });
    }
  });
  envelope('assistant', {
    message: {
      id: msg('final'),
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: options.answer }],
      usage: { input_tokens: 10, output_tokens: 5 },
    },
  });
  return lines;
}
