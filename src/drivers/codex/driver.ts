// `replay --agent codex`: a recorded Codex session through the real Codex CLI — its own prompt, tools and
// loop — with every tool call denied by the hook and answered from the recording by call_id at the proxy.
// One `codex exec` per prompt the user typed, the later ones `codex exec resume <thread>`; each agent step a
// pair on the Responses wire, as Codex sent it.

import { execa } from 'execa';
import type { Message, ToolResult } from '../../model/session.js';
import { type Turn, turns } from '../../model/turns.js';
import { assistantMessage, type ChatMessage } from '../../replay/chat.js';
import { Elider, elideOptions, type ShownSettings, savings } from '../../replay/elide.js';
import { matching, type SessionEnd, shortCircuitOf } from '../../replay/engine.js';
import { missMessage } from '../../replay/free.js';
import { compareCalls } from '../../replay/match.js';
import { type Pair, type PairsWriter, pairSchema } from '../../replay/pairs.js';
import { responseCompletion } from '../../replay/providers/responses.js';
import { chatFromResponses, outputItems, outputValue, type ResponsesWire } from '../../replay/responses.js';
import type { RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { confined } from '../common/confine.js';
import { newSecret, redact } from '../common/loopback.js';
import { promptsOf, rebase, textOf } from '../common/prompts.js';
import {
  endUnreplayed,
  failTurn,
  forEachSession,
  jsonEvents,
  recordStep,
  stepRefusal,
  unusableWorkspace,
  usableWorkspace,
} from '../common/sessions.js';
import { mappedAgents, type RecordedName } from '../opencode/mapping.js';
import type { ResponseBody } from '../wire/openai-responses.js';
import { prepareCodexEnvironment } from './environment.js';
import { codexCall, recordedFor } from './mapping.js';
import {
  type CodexCall,
  type CodexExchange,
  type CodexUpstream,
  type Item,
  startCodexProxy,
} from './proxy.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

export type CodexModel =
  | { kind: 'recorded' }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface CodexReplay {
  runId: string;
  /** The model as the run names it (`recorded`, `responses:gpt-5.5`): what pairs carry. */
  model: string;
  upstream: CodexModel;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Sessions at once, each its own Codex, proxy and private environment. */
  concurrency: number;
  onMiss: 'error' | 'stop';
  maxTurnsFactor: number;
  binary: string;
  /** The model slugs this Codex knows (probe.ts): the one it is told it runs decides its tool set. */
  models: readonly string[];
  /** Run every session here instead of its recorded cwd (calls' paths are rebased to the recorded one). */
  workspace?: string;
  /** Per model call, ms. */
  timeoutMs: number;
  /** Codex compacts a session when a turn's tokens pass this (`model_auto_compact_token_limit`). */
  compactAt?: number;
  /** --elide-repeats / --max-result-bytes, applied to the recorded outputs handed over. */
  shown?: ShownSettings;
  /** Run Codex against this copy-on-write view of the checked directories (the side-effect checker's). */
  view?: Pick<CopyOnWrite, 'wrap'>;
  /** Instead of the view: run Codex under bubblewrap with these paths read-only (the workspace added). */
  sandbox?: { readOnly: string[]; bwrap?: string };
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  onSession?: (event: SessionEnd) => void;
  onNote?: (text: string) => void;
}

/** The slug Codex is told it runs: the recorded one where this Codex knows it, else one it does. */
export function slugFor(recorded: string | undefined, known: readonly string[]): string {
  if (recorded && known.includes(recorded)) return recorded;
  if (known.includes('gpt-5.5')) return 'gpt-5.5';
  return known[0] ?? recorded ?? 'gpt-5.5';
}

/**
 * A recorded turn as the response a recorded model streams, its calls made as Codex makes them when the
 * session is another agent's (mapping.ts; one with no counterpart keeps its recorded name).
 */
export function recordedResponse(turn: Turn, number: number, agent = 'codex', cwd = '/'): ResponseBody {
  const usage = turn.response.usage;
  const response: Message =
    agent === 'codex'
      ? turn.response
      : {
          ...turn.response,
          parts: turn.response.parts.map((part) => {
            if (part.type !== 'tool_call') return part;
            const named = codexCall(agent, part.name, part.input, cwd);
            if (!named) return part;
            const { namespace: _namespace, freeform: _freeform, ...call } = part;
            return {
              ...call,
              name: named.name,
              input: named.input,
              ...(named.freeform ? { freeform: true } : {}),
            };
          }),
        };
  const input = (usage?.inputTokens ?? 0) + (usage?.cacheReadTokens ?? 0);
  return {
    id: `resp_replay_${number}`,
    model: turn.response.model ?? 'recorded',
    status: 'completed',
    output: outputItems(response, `replay_${number}`) as ResponseBody['output'],
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: usage?.cacheReadTokens ?? 0 },
      output_tokens: usage?.outputTokens ?? 0,
      total_tokens: input + (usage?.outputTokens ?? 0),
    },
  };
}

export async function replayCodex(run: CodexReplay): Promise<void> {
  await forEachSession(run, (id) => codexSession(run, id));
}

async function codexSession(run: CodexReplay, id: string): Promise<void> {
  const loaded = run.sessions.load(id);
  if (!loaded) return;
  const { session, own } = loaded;
  const skip = (why: string, status: 'done' | 'failed' = 'failed'): void =>
    endUnreplayed(run, session.id, why, status);
  if (session.agent !== 'codex' && session.agent !== 'opencode' && !mappedAgents.includes(session.agent))
    return skip(`not replayed: no mapping of ${session.agent}'s tools to Codex's`);
  // Not failures: what they answered is given to their parent (a sub-agent's result, a compaction's summary).
  if (session.kind === 'subagent')
    return skip('a sub-agent: its parent is shown the results it recorded', 'done');
  if (session.kind === 'compaction') return skip('a compaction request: Codex makes its own', 'done');
  if (session.continues)
    return skip(
      `not replayed: a fork of ${session.continues.sessionId.slice(0, 12)} (codex exec fork is not driven yet; replay its parent)`,
    );
  const recordedTurns = [...turns(session.messages, own)];
  const originals: Assistant[] = recordedTurns.map((turn) => assistantMessage(turn.response));
  const prompts = promptsOf(session.messages, own, recordedTurns);
  const workspace = run.workspace ?? session.cwd ?? undefined;
  if (!usableWorkspace(workspace)) return skip(unusableWorkspace(workspace));
  if (prompts.length === 0) return skip('not replayed: no user message to start from');
  const recordedCwd = session.cwd ?? workspace;
  const recordedModel = recordedTurns.find((turn) => turn.response.model)?.response.model;
  const slug = slugFor(recordedModel, run.models);
  // Another agent's model is no Codex model: only a Codex session's is worth a word.
  if (session.agent === 'codex' && recordedModel && slug !== recordedModel)
    run.onNote?.(
      `${session.id.slice(0, 12)}: this codex does not know the recorded model ${recordedModel}; it runs as ${slug} (its tools are that model's)`,
    );
  const calls = session.messages.flatMap((message) =>
    message.parts.flatMap((part) => (part.type === 'tool_call' ? [part.name] : [])),
  );
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

  /** An output as the model is shown it: --elide-repeats / --max-result-bytes over the recorded one. */
  const shownOutput = (call: CodexCall, result: ToolResult): ToolResult['output'] => {
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
  const candidatesOf = (call: { name: string; input: unknown }) => {
    const input = rebase(call.input, workspace, recordedCwd);
    const candidates = recordedFor(session.agent, call.name, input, recordedCwd);
    // A call with no counterpart is tried as it is (a recorded call Codex could not make, served by --model
    // recorded and answered as an unsupported call).
    if (!candidates.some((candidate) => candidate.name === call.name))
      candidates.push({ name: call.name, input });
    return candidates;
  };

  const answer = (call: CodexCall): string | Item[] => {
    let tried: ReturnType<typeof circuit.answer> = { kind: 'miss', nearest: [] };
    for (const [index, candidate] of candidatesOf(call).entries()) {
      const attempt = circuit.answer(candidate.name, candidate.input);
      if (index === 0 || attempt.kind === 'hit') tried = attempt;
      if (attempt.kind === 'hit') break;
    }
    if (tried.kind === 'hit') return outputValue(shownOutput(call, tried.result));
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
    const missed = missMessage(call.name, tried.nearest);
    // A miss is an error output to the model: it ends the baseline of what it asked for.
    return outputValue(
      shownOutput(call, { type: 'tool_result', callId: call.id, output: missed, isError: true }),
    );
  };

  const upstream: CodexUpstream =
    run.upstream.kind === 'recorded'
      ? {
          kind: 'recorded',
          next: (kind) => {
            if (kind === 'compaction') {
              const [summary, ...rest] = summaries;
              summaries = rest;
              if (!summary) return undefined;
              return {
                id: `resp_replay_summary_${rest.length}`,
                model: 'recorded',
                status: 'completed',
                output: [
                  {
                    id: `msg_replay_summary_${rest.length}`,
                    type: 'message',
                    role: 'assistant',
                    status: 'completed',
                    content: [{ type: 'output_text', text: textOf(summary), annotations: [] }],
                  },
                ],
                usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
              };
            }
            const at = current[served];
            const turn = at === undefined ? undefined : recordedTurns[at];
            if (!turn) return undefined;
            served++;
            return recordedResponse(turn, served, session.agent, recordedCwd);
          },
        }
      : run.upstream;

  const onExchange = (exchange: CodexExchange): void => {
    // Codex compacted: its model no longer sees any earlier output, so none may be pointed at.
    if (exchange.kind === 'compaction' && exchange.response) elider?.reset();
    if (exchange.exhausted) {
      exhausted++;
      return;
    }
    if (exchange.kind !== 'step' || exchange.refused) return;
    if (exchange.error !== undefined || !exchange.response) {
      lastError = exchange.error ?? 'no answer';
      return;
    }
    lastError = undefined;
    const turn = ++steps;
    const at = current[asked++];
    const original = at === undefined ? null : (originals[at] ?? null);
    const wire: ResponsesWire = {
      api: 'openai-responses',
      source: 'agent',
      body: { input: exchange.request.input, tools: exchange.request.tools ?? [] },
    };
    const chat = chatFromResponses(wire.body);
    const answered = responseCompletion(exchange.response as never);
    const completion = answered.message;
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
      prompt_tokens: answered.usage?.prompt_tokens ?? 0,
      completion_tokens: answered.usage?.completion_tokens ?? 0,
    };
    const pair: Pair = {
      schema: pairSchema,
      run: run.runId,
      session: session.id,
      agent: session.agent,
      turn,
      mode: 'free',
      model: run.model,
      messages: chat.messages,
      tools: chat.tools,
      completion,
      original,
      match: { tool_calls: match.match },
      usage,
      latency_ms: exchange.latencyMs,
      finish_reason: answered.finishReason ?? 'stop',
      sources: { system: 'agent', tools: 'agent' },
      tool_errors: chat.errors,
      wire,
    };
    recordStep(run, pair, match, saved);
  };

  const secret = newSecret();
  const proxy = await startCodexProxy({
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
  const environment = prepareCodexEnvironment({
    workspace,
    baseURL: proxy.url,
    apiKey: secret,
    model: slug,
    updatePlan: calls.includes('update_plan'),
    ...(run.compactAt ? { compactAt: run.compactAt } : {}),
  });
  try {
    let thread: string | undefined;
    for (const [index, prompt] of prompts.entries()) {
      current = prompt.turns;
      served = 0;
      asked = 0;
      const exhaustedBefore = exhausted;
      const args = [...environment.args, ...(thread ? ['resume', thread] : []), '-'];
      // Under the watchdog: should this process die without cleaning up, Codex is stopped too.
      const watched = [environment.watchdog, String(process.pid), run.binary, ...args];
      const argv = confined(watched, run, { sessionId: session.id, workspace, root: environment.root });
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
      const events = jsonEvents(String(child.stdout ?? ''));
      thread ??= events.find((event) => event.type === 'thread.started')?.thread_id as string | undefined;
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
      const said = events.find((event) => event.type === 'turn.failed' || event.type === 'error') as
        | { error?: { message?: unknown }; message?: unknown }
        | undefined;
      const failed = child.exitCode !== 0 || lastError !== undefined || !thread || said !== undefined;
      if (failed && !ranOut) {
        const tail = String(child.stderr ?? '')
          .trim()
          .split('\n')
          .filter((line) => !line.includes('blocked by PreToolUse hook'))
          .slice(-5)
          .join('\n');
        const message = said?.error?.message ?? said?.message;
        const why = redact(
          lastError ??
            (child.timedOut
              ? `codex did not finish within ${Math.round(processTimeout / 1000)} s`
              : `codex exited with ${child.exitCode ?? child.signal}${message ? `: ${String(message)}` : ''}${tail ? `\n${tail}` : ''}`),
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
