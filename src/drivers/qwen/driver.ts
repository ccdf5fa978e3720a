// `replay --agent qwen`: a recorded Qwen Code session through the real Qwen Code CLI — its own prompt, tools and
// loop — with every tool call denied by the hook and answered from the recording by tool_call_id at the proxy.
// One headless `qwen` run per prompt the user typed (the prompt on stdin), the first with `--session-id` of ours,
// the later ones `--resume` of it; each agent step a pair, its request as Qwen sent it (chat completions).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { outputText, type ToolResult } from '../../model/session.js';
import { turns } from '../../model/turns.js';
import { assistantMessage, type ChatMessage } from '../../replay/chat.js';
import { Elider, elideOptions, type ShownSettings, savings } from '../../replay/elide.js';
import { matching, type SessionEnd, shortCircuitOf } from '../../replay/engine.js';
import { missMessage } from '../../replay/free.js';
import { compareCalls } from '../../replay/match.js';
import { type Pair, type PairsWriter, pairSchema } from '../../replay/pairs.js';
import type { RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { sandboxed } from '../../verify/sandbox.js';
import { newSecret, redact } from '../common/loopback.js';
import { promptsOf, rebase, textOf } from '../common/prompts.js';
import {
  endUnreplayed,
  failTurn,
  forEachSession,
  recordStep,
  stepRefusal,
  unusableWorkspace,
  usableWorkspace,
} from '../common/sessions.js';
import { mappedAgents, type RecordedName } from '../opencode/mapping.js';
import { prepareQwenEnvironment } from './environment.js';
import { qwenCall, recordedFor } from './mapping.js';
import {
  contentText,
  type QwenCall,
  type QwenExchange,
  type QwenUpstream,
  startQwenProxy,
  type WireMessage,
} from './proxy.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

export type QwenModel =
  | { kind: 'recorded' }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface QwenReplay {
  runId: string;
  /** The model as the run names it (`recorded`, `openai:qwen3-coder-plus`): what pairs carry. */
  model: string;
  upstream: QwenModel;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Sessions at once, each its own Qwen, proxy and private environment. */
  concurrency: number;
  onMiss: 'error' | 'stop';
  maxTurnsFactor: number;
  binary: string;
  /** Run every session here instead of its recorded cwd (calls' paths are rebased to the recorded one). */
  workspace?: string;
  /** Per model call, ms. */
  timeoutMs: number;
  /** --elide-repeats / --max-result-bytes, applied to the recorded results handed over. */
  shown?: ShownSettings;
  /** Run Qwen against this copy-on-write view of the checked directories (the side-effect checker's). */
  view?: Pick<CopyOnWrite, 'wrap'>;
  /** Instead of the view: run Qwen under bubblewrap with these paths read-only (the workspace added). */
  sandbox?: { readOnly: string[]; bwrap?: string };
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  onSession?: (event: SessionEnd) => void;
  onNote?: (text: string) => void;
}

/** The model name Qwen is told when the recording names none. */
export const defaultModel = 'qwen3-coder-plus';

/** What a recorded model answers the memory extractor with: nothing to keep (it is no turn of the session). */
export const sideAnswer = 'Nothing to save.';

/** A workspace whose own settings would run (its hooks, MCP servers) or switch our hook off: Qwen reads it. */
export function workspaceSettings(workspace: string): string | undefined {
  const file = join(workspace, '.qwen', 'settings.json');
  return existsSync(file) ? file : undefined;
}

/** The request's messages as a pair holds them: Qwen's text-part lists of system and tool messages as text. */
export function pairMessages(messages: readonly WireMessage[]): ChatMessage[] {
  return messages.map((message) =>
    (message.role === 'tool' || message.role === 'system') && typeof message.content !== 'string'
      ? ({ ...message, content: contentText(message.content) } as unknown as ChatMessage)
      : (message as unknown as ChatMessage),
  );
}

/** The result Qwen's model is given: its text (Qwen's own results are text). */
function resultText(output: ToolResult['output']): string {
  return typeof output === 'string' ? output : outputText(output);
}

export async function replayQwen(run: QwenReplay): Promise<void> {
  await forEachSession(run, (id) => qwenSession(run, id));
}

async function qwenSession(run: QwenReplay, id: string): Promise<void> {
  const loaded = run.sessions.load(id);
  if (!loaded) return;
  const { session, own } = loaded;
  const skip = (why: string, status: 'done' | 'failed' = 'failed'): void =>
    endUnreplayed(run, session.id, why, status);
  if (session.agent !== 'qwen' && session.agent !== 'opencode' && !mappedAgents.includes(session.agent))
    return skip(`not replayed: no mapping of ${session.agent}'s tools to Qwen Code's`);
  if (session.kind === 'subagent')
    return skip('a sub-agent: its parent is shown the results it recorded', 'done');
  if (session.kind === 'compaction') return skip('a compaction request: Qwen makes its own', 'done');
  if (session.continues)
    return skip(`not replayed: a fork of ${session.continues.sessionId.slice(0, 12)} (replay its parent)`);
  const recordedTurns = [...turns(session.messages, own)];
  const originals: Assistant[] = recordedTurns.map((turn) => assistantMessage(turn.response));
  const prompts = promptsOf(session.messages, own, recordedTurns);
  const workspace = run.workspace ?? session.cwd ?? undefined;
  if (!usableWorkspace(workspace)) return skip(unusableWorkspace(workspace));
  const own_settings = workspaceSettings(workspace);
  if (own_settings)
    return skip(
      `not replayed: ${own_settings} is Qwen's project settings (its hooks and MCP servers would run, and it can turn hooks off); replay with --workspace in a copy without it`,
    );
  if (prompts.length === 0) return skip('not replayed: no user message to start from');
  const recordedCwd = session.cwd ?? workspace;
  const recordedModel = recordedTurns.find((turn) => turn.response.model)?.response.model ?? defaultModel;
  const circuit = shortCircuitOf(session);
  const shown = elideOptions(session.agent, run.shown);
  const elider = shown ? new Elider(shown) : undefined;
  const saved = { elided: 0, cut: 0, bytesSaved: 0 };

  const budget = Math.max(1, Math.ceil(recordedTurns.length * run.maxTurnsFactor));
  const processTimeout = run.timeoutMs * (budget + 2) + 60_000;
  let summaries = session.messages.filter((message) => message.compaction);
  let current: number[] = [];
  let served = 0;
  let asked = 0;
  let steps = 0;
  let stopped: string | undefined;
  let lastError: string | undefined;
  let exhausted = 0;
  let status: 'done' | 'diverged' | 'failed' = 'done';

  /** A result as the model is shown it: --elide-repeats / --max-result-bytes over the recorded one. */
  const shownOutput = (call: QwenCall, result: ToolResult): ToolResult['output'] => {
    if (!elider) return result.output;
    elider.call(call.id, call.name, call.input);
    const { shown: output, fate } = elider.result({ ...result, callId: call.id, name: call.name });
    const counted = savings([fate]);
    saved.elided += counted.elided;
    saved.cut += counted.truncated;
    saved.bytesSaved += counted.bytesSaved;
    return output.output;
  };

  /** The recorded calls a live one may stand for: another agent's recording names its calls its own way. */
  const candidatesOf = (call: { name: string; input: unknown }): RecordedName[] => {
    const input = rebase(call.input, workspace, recordedCwd);
    const candidates = recordedFor(session.agent, call.name, input);
    // A call with no counterpart is tried as it is (a recorded call Qwen could not make, served by --model
    // recorded under its recorded name).
    if (!candidates.some((candidate) => candidate.name === call.name))
      candidates.push({ name: call.name, input });
    return candidates;
  };

  const answer = (call: QwenCall): string => {
    let tried: ReturnType<typeof circuit.answer> = { kind: 'miss', nearest: [] };
    for (const [index, candidate] of candidatesOf(call).entries()) {
      const attempt = circuit.answer(candidate.name, candidate.input);
      if (index === 0 || attempt.kind === 'hit') tried = attempt;
      if (attempt.kind === 'hit') break;
    }
    if (tried.kind === 'hit') return resultText(shownOutput(call, tried.result));
    run.runs.saveMiss(run.runId, {
      sessionId: session.id,
      // The step being answered: its pair is counted once its answer is assembled, after this.
      turn: steps + 1,
      call: { name: call.name, input: call.input },
      nearest: tried.nearest,
      policy: run.onMiss,
    });
    if (run.onMiss === 'stop')
      stopped ??= `replay-history: stopped (--on-miss stop): ${call.name} ${JSON.stringify(call.input)} is not in the recording`;
    // A miss is an error result to the model: it ends the baseline of what it asked for.
    const missed = missMessage(call.name, tried.nearest);
    return resultText(
      shownOutput(call, { type: 'tool_result', callId: call.id, output: missed, isError: true }),
    );
  };

  const upstream: QwenUpstream =
    run.upstream.kind === 'recorded'
      ? {
          kind: 'recorded',
          next: (kind) => {
            if (kind === 'side') return { message: { role: 'assistant', content: sideAnswer } };
            if (kind === 'compaction') {
              const [summary, ...rest] = summaries;
              summaries = rest;
              if (!summary) return undefined;
              return { message: { role: 'assistant', content: textOf(summary) } };
            }
            const at = current[served];
            const turn = at === undefined ? undefined : recordedTurns[at];
            if (!turn) return undefined;
            served++;
            const usage = turn.response.usage;
            return {
              message: assistantMessage(
                session.agent === 'qwen'
                  ? turn.response
                  : {
                      ...turn.response,
                      parts: turn.response.parts.map((part) => {
                        if (part.type !== 'tool_call') return part;
                        const named = qwenCall(session.agent, part.name, part.input);
                        return named ? { ...part, name: named.name, input: named.input } : part;
                      }),
                    },
              ),
              usage: {
                prompt_tokens: (usage?.inputTokens ?? 0) + (usage?.cacheReadTokens ?? 0),
                completion_tokens: usage?.outputTokens ?? 0,
              },
            };
          },
        }
      : run.upstream;

  const onExchange = (exchange: QwenExchange): void => {
    // Qwen compressed its history: its model no longer sees any earlier result, so none may be pointed at.
    if (exchange.kind === 'compaction' && exchange.message) elider?.reset();
    if (exchange.exhausted) {
      exhausted++;
      return;
    }
    if (exchange.kind !== 'step' || exchange.refused) return;
    if (exchange.error !== undefined || !exchange.message) {
      lastError = exchange.error ?? 'no answer';
      return;
    }
    lastError = undefined;
    const turn = ++steps;
    const at = current[asked++];
    const original = at === undefined ? null : (originals[at] ?? null);
    const completion = exchange.message;
    // The model's calls as the recording would name them (paths rebased), for comparing with the original's:
    // of several names a call may have in the recording, the one the original turn used.
    const used = new Set((original?.tool_calls ?? []).map((call) => call.function.name));
    const made = (completion.tool_calls ?? []).map((call) => {
      let input: unknown;
      try {
        input = JSON.parse(call.function.arguments);
      } catch {
        return call;
      }
      const candidates = candidatesOf({ name: call.function.name, input });
      const named =
        candidates.find((candidate) => used.has(candidate.name)) ?? (candidates[0] as RecordedName);
      return { ...call, function: { name: named.name, arguments: JSON.stringify(named.input) } };
    });
    const match = compareCalls(made, original?.tool_calls ?? [], matching(session));
    const usage = {
      prompt_tokens: Number(exchange.usage?.prompt_tokens ?? 0),
      completion_tokens: Number(exchange.usage?.completion_tokens ?? 0),
    };
    const pair: Pair = {
      schema: pairSchema,
      run: run.runId,
      session: session.id,
      agent: session.agent,
      turn,
      mode: 'free',
      model: run.model,
      messages: pairMessages(exchange.request.messages),
      tools: (exchange.request.tools ?? []) as Pair['tools'],
      completion,
      original,
      match: { tool_calls: match.match },
      usage,
      latency_ms: exchange.latencyMs,
      finish_reason: exchange.finishReason ?? 'stop',
      // The real agent built this request: its own system prompt and tools, as it sent them.
      sources: { system: 'agent', tools: 'agent' },
    };
    recordStep(run, pair, match, saved);
  };

  const secret = newSecret();
  const proxy = await startQwenProxy({
    secret,
    upstream,
    answer,
    onExchange,
    timeoutMs: run.timeoutMs,
    refuse: (kind) => {
      if (kind !== 'step') return undefined;
      return stepRefusal(stopped, steps, budget);
    },
  });
  const environment = prepareQwenEnvironment({
    workspace,
    baseURL: proxy.url,
    apiKey: secret,
    model: recordedModel,
  });
  try {
    // Ours, so the later prompts resume this run's session (never one of the user's).
    const chat = randomUUID();
    for (const [index, prompt] of prompts.entries()) {
      current = prompt.turns;
      served = 0;
      asked = 0;
      const exhaustedBefore = exhausted;
      const args = [...environment.args, ...(index === 0 ? ['--session-id', chat] : ['--resume', chat])];
      // Under the watchdog: should this process die without cleaning up, Qwen is stopped too.
      const watched = [...environment.watchdog, String(process.pid), run.binary, ...args];
      const argv = run.sandbox
        ? sandboxed(watched, {
            readOnly: [...new Set([workspace, ...run.sandbox.readOnly])],
            writable: [environment.root],
            network: true,
            cwd: workspace,
            ...(run.sandbox.bwrap ? { bwrap: run.sandbox.bwrap } : {}),
          })
        : run.view
          ? run.view.wrap(watched, session.id, workspace)
          : watched;
      const child = await execa(argv[0] as string, argv.slice(1), {
        cwd: workspace,
        env: environment.env,
        extendEnv: false,
        input: prompt.text,
        reject: false,
        timeout: processTimeout,
        forceKillAfterDelay: 2_000,
        maxBuffer: 256 * 1024 * 1024,
      });
      const result = resultEvent(String(child.stdout ?? ''));
      if (stopped) {
        status = 'diverged';
        break;
      }
      if (steps >= budget && index < prompts.length - 1) {
        run.onNote?.(`${session.id.slice(0, 12)}: stopped at the budget of ${budget} model calls`);
        break;
      }
      const ranOut =
        run.upstream.kind === 'recorded' && exhausted > exhaustedBefore && lastError === undefined;
      const failed = child.exitCode !== 0 || lastError !== undefined || !result || result.is_error === true;
      if (failed && !ranOut) {
        const tail = String(child.stderr ?? '')
          .trim()
          .split('\n')
          .filter((line) => !/^Ripgrep not available|Falling back to built-in grep/.test(line))
          .slice(-5)
          .join('\n');
        const said =
          typeof result?.error === 'string'
            ? result.error
            : typeof result?.result === 'string'
              ? result.result
              : '';
        const why = redact(
          lastError ??
            (child.timedOut
              ? `qwen did not finish within ${Math.round(processTimeout / 1000)} s`
              : `qwen exited with ${child.exitCode ?? child.signal}${said && result?.is_error ? `: ${said}` : ''}${tail ? `\n${tail}` : ''}`),
          secret,
        );
        failTurn(run, session.id, steps + 1, originals[steps]?.tool_calls?.length ?? 0, why);
        status = 'failed';
        break;
      }
    }
    run.runs.setSessionStatus(run.runId, session.id, status);
    run.onSession?.({ sessionId: session.id, status });
  } finally {
    await proxy.close();
    environment.cleanup();
  }
}

/** The `result` event of `--output-format json` (a JSON array of events), or undefined. */
export function resultEvent(stdout: string): { is_error?: boolean; [key: string]: unknown } | undefined {
  const text = stdout.trim();
  let events: unknown;
  try {
    events = JSON.parse(text.slice(text.indexOf('[')));
  } catch {
    return undefined;
  }
  if (!Array.isArray(events)) return undefined;
  return (events as { type?: unknown }[]).findLast((event) => event?.type === 'result') as
    | { is_error?: boolean }
    | undefined;
}
