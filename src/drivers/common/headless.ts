// The session loop of a driver whose agent runs headless once per prompt and resumes its own session for the
// next (Qwen Code, Gemini CLI: the Gemini CLI lineage). Each agent gives what is its own — its proxy on its wire,
// its private environment, its flags, how its run says it failed, how a request is told apart and put in a pair —
// and the loop does the rest the same way for both: which sessions it may replay, the recorded turns handed out
// per prompt under `--model recorded`, each call answered from the recording (or a miss), each agent step a
// pair, the budget and `--on-miss stop`, the cause of a failed run. Every tool call was denied by the agent's own
// hook before it ran; the proxy puts the recorded result in its place.

import { randomUUID } from 'node:crypto';
import { execa } from 'execa';
import { outputText, type ToolResult } from '../../model/session.js';
import { turns } from '../../model/turns.js';
import { assistantMessage, type ChatMessage, type ChatTool } from '../../replay/chat.js';
import { Elider, elideOptions, type ShownSettings, savings } from '../../replay/elide.js';
import { matching, type SessionEnd, shortCircuitOf } from '../../replay/engine.js';
import { missMessage } from '../../replay/free.js';
import { compareCalls } from '../../replay/match.js';
import { type Pair, type PairsWriter, pairSchema } from '../../replay/pairs.js';
import type { RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { mappedAgents, type RecordedName } from '../opencode/mapping.js';
import { qwenCall, recordedFor } from '../qwen/mapping.js';
import { confined } from './confine.js';
import { newSecret, redact } from './loopback.js';
import { promptsOf, rebase, textOf } from './prompts.js';
import {
  endUnreplayed,
  failTurn,
  forEachSession,
  recordStep,
  stepRefusal,
  unusableWorkspace,
  usableWorkspace,
} from './sessions.js';

export type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

/** What a request is: an agent step, the agent's compression summarizer, or a side call (memory, router…). */
export type ExchangeKind = 'step' | 'compaction' | 'side';

/** One request through the proxy and what came of it. */
export interface HeadlessExchange {
  kind: ExchangeKind;
  message?: Assistant;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; [key: string]: unknown } | null;
  finishReason?: string | null;
  error?: string;
  /** Refused here (budget spent, --on-miss stop), never sent upstream. */
  refused?: boolean;
  /** The recorded turns had nothing left to answer with. */
  exhausted?: boolean;
  latencyMs: number;
}

/** A call the model made, as the agent will schedule (and its hook deny) it. */
export interface HeadlessCall {
  id: string;
  name: string;
  /** The arguments parsed (`{raw}` when they are not JSON). */
  input: unknown;
}

/** The result a call is given in place of the deny: the recorded one's text, and whether it was an error. */
export interface Answer {
  text: string;
  isError: boolean;
}

export interface RecordedAnswer {
  message: Assistant;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export type HeadlessUpstream<Request> =
  /** Answers from the recording: `next` gives the answer for this exchange, or undefined when none is left. */
  | { kind: 'recorded'; next: (kind: ExchangeKind, request: Request) => RecordedAnswer | undefined }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface ProxyOptions<Request, Exchange extends HeadlessExchange> {
  secret: string;
  upstream: HeadlessUpstream<Request>;
  answer: (call: HeadlessCall) => Answer;
  refuse: (kind: ExchangeKind) => string | undefined;
  onExchange: (exchange: Exchange) => void;
  timeoutMs: number;
}

export interface HeadlessEnvironment {
  /** The private tree (writable under --sandbox). */
  root: string;
  /** The watchdog, as a command: run `[...watchdog, String(process.pid), binary, ...args]`. */
  watchdog: string[];
  env: Record<string, string>;
  /** The flags of every run, before the ones that start or resume the session. */
  args: string[];
  cleanup(): void;
}

/** What makes one agent of the lineage: everything the loop does not do the same way for all of them. */
export interface HeadlessAgent<Request, Exchange extends HeadlessExchange> {
  /** Its command, as messages name it (`qwen`, `gemini`). */
  command: string;
  /** Agents whose recordings call its tools by its own names. */
  natives: readonly string[];
  /** The model it is told when the recording names none. */
  defaultModel: string;
  /** A workspace file it would read that could run code or switch the hook off (the session is refused). */
  projectSettings(workspace: string): string | undefined;
  /** What such a file is, for the refusal. */
  projectSettingsWhy: string;
  startProxy(options: ProxyOptions<Request, Exchange>): Promise<{ url: string; close(): Promise<void> }>;
  prepareEnvironment(options: {
    workspace: string;
    baseURL: string;
    apiKey: string;
    model: string;
  }): HeadlessEnvironment;
  /** The flags that start (`index` 0) or resume the run's own session `chat` (a UUID of ours). */
  sessionArgs(index: number, chat: string): string[];
  /** How a run ended, from its stdout: whether it said it failed and what; undefined when it said nothing. */
  outcome(stdout: string): { failed: boolean; said?: string } | undefined;
  /** stderr lines that are no cause (start-up notices). */
  noise: RegExp;
  /** A step's request as a pair holds it. */
  pairOf(exchange: Exchange): { messages: ChatMessage[]; tools: ChatTool[] };
  /** What a recorded model answers a side call with (it is no turn of the session). */
  sideAnswer: string;
}

export interface HeadlessReplay<Request> {
  runId: string;
  /** The model as the run names it (`recorded`, `openai:qwen3-coder-plus`): what pairs carry. */
  model: string;
  upstream: { kind: 'recorded' } | Extract<HeadlessUpstream<Request>, { kind: 'http' }>;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Sessions at once, each its own agent, proxy and private environment. */
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
  /** Run the agent against this copy-on-write view of the checked directories (the side-effect checker's). */
  view?: Pick<CopyOnWrite, 'wrap'>;
  /** Instead of the view: run the agent under bubblewrap with these paths read-only (the workspace added). */
  sandbox?: { readOnly: string[]; bwrap?: string };
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  onSession?: (event: SessionEnd) => void;
  onNote?: (text: string) => void;
}

/** The result the agent's model is given: its text (the lineage's results are text). */
function resultText(output: ToolResult['output']): string {
  return typeof output === 'string' ? output : outputText(output);
}

export async function replayHeadless<Request, Exchange extends HeadlessExchange>(
  run: HeadlessReplay<Request>,
  agent: HeadlessAgent<Request, Exchange>,
): Promise<void> {
  await forEachSession(run, (id) => headlessSession(run, agent, id));
}

async function headlessSession<Request, Exchange extends HeadlessExchange>(
  run: HeadlessReplay<Request>,
  agent: HeadlessAgent<Request, Exchange>,
  id: string,
): Promise<void> {
  const loaded = run.sessions.load(id);
  if (!loaded) return;
  const { session, own } = loaded;
  const skip = (why: string, status: 'done' | 'failed' = 'failed'): void =>
    endUnreplayed(run, session.id, why, status);
  const native = agent.natives.includes(session.agent);
  if (!native && session.agent !== 'opencode' && !mappedAgents.includes(session.agent))
    return skip(`not replayed: no mapping of ${session.agent}'s tools to ${agent.command}'s`);
  if (session.kind === 'subagent')
    return skip('a sub-agent: its parent is shown the results it recorded', 'done');
  if (session.kind === 'compaction')
    return skip(`a compaction request: ${agent.command} makes its own`, 'done');
  if (session.continues)
    return skip(`not replayed: a fork of ${session.continues.sessionId.slice(0, 12)} (replay its parent)`);
  const recordedTurns = [...turns(session.messages, own)];
  const originals: Assistant[] = recordedTurns.map((turn) => assistantMessage(turn.response));
  const prompts = promptsOf(session.messages, own, recordedTurns);
  const workspace = run.workspace ?? session.cwd ?? undefined;
  if (!usableWorkspace(workspace)) return skip(unusableWorkspace(workspace));
  const projectSettings = agent.projectSettings(workspace);
  if (projectSettings)
    return skip(
      `not replayed: ${projectSettings} is ${agent.projectSettingsWhy}; replay with --workspace in a copy without it`,
    );
  if (prompts.length === 0) return skip('not replayed: no user message to start from');
  const recordedCwd = session.cwd ?? workspace;
  const recordedModel =
    recordedTurns.find((turn) => turn.response.model)?.response.model ?? agent.defaultModel;
  const circuit = shortCircuitOf(session);
  const shown = elideOptions(session.agent, run.shown);
  const elider = shown ? new Elider(shown) : undefined;
  const saved = { elided: 0, cut: 0, bytesSaved: 0 };

  const budget = Math.max(1, Math.ceil(recordedTurns.length * run.maxTurnsFactor));
  const processTimeout = run.timeoutMs * (budget + 2) + 60_000;
  // The recorded compaction summaries, in order (a session-context refresh is no summary).
  let summaries = session.messages.filter(
    (message) => message.compaction && message.attachment !== 'session_context',
  );
  let current: number[] = [];
  let served = 0;
  let asked = 0;
  let steps = 0;
  let stopped: string | undefined;
  let lastError: string | undefined;
  let exhausted = 0;
  let status: 'done' | 'diverged' | 'failed' = 'done';

  /** A result as the model is shown it: --elide-repeats / --max-result-bytes over the recorded one. */
  const shownResult = (call: HeadlessCall, result: ToolResult): Answer => {
    if (!elider) return { text: resultText(result.output), isError: result.isError === true };
    elider.call(call.id, call.name, call.input);
    const { shown: output, fate } = elider.result({ ...result, callId: call.id, name: call.name });
    const counted = savings([fate]);
    saved.elided += counted.elided;
    saved.cut += counted.truncated;
    saved.bytesSaved += counted.bytesSaved;
    return { text: resultText(output.output), isError: output.isError === true };
  };

  /** The recorded calls a live one may stand for: another agent's recording names its calls its own way. */
  const candidatesOf = (call: { name: string; input: unknown }): RecordedName[] => {
    const input = rebase(call.input, workspace, recordedCwd);
    const candidates = native ? [{ name: call.name, input }] : recordedFor(session.agent, call.name, input);
    // A call with no counterpart is tried as it is (a recorded call the agent could not make, served by
    // --model recorded under its recorded name).
    if (!candidates.some((candidate) => candidate.name === call.name))
      candidates.push({ name: call.name, input });
    return candidates;
  };

  const answer = (call: HeadlessCall): Answer => {
    let tried: ReturnType<typeof circuit.answer> = { kind: 'miss', nearest: [] };
    for (const [index, candidate] of candidatesOf(call).entries()) {
      const attempt = circuit.answer(candidate.name, candidate.input);
      if (index === 0 || attempt.kind === 'hit') tried = attempt;
      if (attempt.kind === 'hit') break;
    }
    if (tried.kind === 'hit') return shownResult(call, tried.result);
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
    return shownResult(call, { type: 'tool_result', callId: call.id, output: missed, isError: true });
  };

  const upstream: HeadlessUpstream<Request> =
    run.upstream.kind === 'recorded'
      ? {
          kind: 'recorded',
          next: (kind) => {
            if (kind === 'side') return { message: { role: 'assistant', content: agent.sideAnswer } };
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
                native
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

  const onExchange = (exchange: Exchange): void => {
    // The agent compressed its history: its model no longer sees any earlier result, so none may be pointed at.
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
    const asSent = agent.pairOf(exchange);
    const pair: Pair = {
      schema: pairSchema,
      run: run.runId,
      session: session.id,
      agent: session.agent,
      turn,
      mode: 'free',
      model: run.model,
      messages: asSent.messages,
      tools: asSent.tools as Pair['tools'],
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
  const proxy = await agent.startProxy({
    secret,
    upstream,
    answer,
    onExchange,
    timeoutMs: run.timeoutMs,
    refuse: (kind) => (kind === 'step' ? stepRefusal(stopped, steps, budget) : undefined),
  });
  let environment: HeadlessEnvironment;
  try {
    environment = agent.prepareEnvironment({
      workspace,
      baseURL: proxy.url,
      apiKey: secret,
      model: recordedModel,
    });
  } catch (error) {
    await proxy.close();
    throw error;
  }
  try {
    // Ours, so the later prompts resume this run's session (never one of the user's).
    const chat = randomUUID();
    for (const [index, prompt] of prompts.entries()) {
      current = prompt.turns;
      served = 0;
      asked = 0;
      const exhaustedBefore = exhausted;
      const args = [...environment.args, ...agent.sessionArgs(index, chat)];
      // Under the watchdog: should this process die without cleaning up, the agent is stopped too.
      const watched = [...environment.watchdog, String(process.pid), run.binary, ...args];
      const argv = confined(watched, run, { sessionId: session.id, workspace, root: environment.root });
      const child = await execa(argv[0] as string, argv.slice(1), {
        cwd: workspace,
        env: environment.env,
        extendEnv: false,
        // The prompt on stdin, never an argument: a prompt may start with `-`.
        input: prompt.text,
        reject: false,
        timeout: processTimeout,
        forceKillAfterDelay: 2_000,
        maxBuffer: 256 * 1024 * 1024,
      });
      const outcome = agent.outcome(String(child.stdout ?? ''));
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
      const failed = child.exitCode !== 0 || lastError !== undefined || !outcome || outcome.failed;
      if (failed && !ranOut) {
        const tail = String(child.stderr ?? '')
          .trim()
          .split('\n')
          .filter((line) => !agent.noise.test(line))
          .slice(-5)
          .join('\n');
        const said = outcome?.failed && outcome.said ? `: ${outcome.said}` : '';
        const why = redact(
          lastError ??
            (child.timedOut
              ? `${agent.command} did not finish within ${Math.round(processTimeout / 1000)} s`
              : `${agent.command} exited with ${child.exitCode ?? child.signal}${said}${tail ? `\n${tail}` : ''}`),
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
