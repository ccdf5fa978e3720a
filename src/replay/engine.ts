import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { sha256 } from '../model/canonical-json.js';
import type { Session } from '../model/session.js';
import { type Turn, turns } from '../model/turns.js';
import type { RunStore } from '../store/runs.js';
import { turnKey } from '../store/runs.js';
import type { SessionStore } from '../store/sessions.js';
import { isReadOnly, sharedToolsFor, toolCommentary, toolDefaults } from './catalogue/index.js';
import { assistantMessage, type ChatMessage } from './chat.js';
import { askedWith } from './context.js';
import { elideOptions, type ShownSettings, savings } from './elide.js';
import { compareCalls, type NormalizeContext } from './match.js';
import { itemsParts, type JsonParts } from './memo.js';
import { type Pair, type PairSources, type PairsWriter, pairSchema } from './pairs.js';
import { type Completion, type Provider, ProviderError } from './providers/types.js';
import { ShortCircuit } from './shortcircuit.js';
import type { Wire } from './wire.js';

/** What every replay run needs, whatever its mode. */
export interface ReplayRun {
  runId: string;
  model: string;
  provider: Provider;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Forced mode: model calls in flight at once. Free mode: sessions at once (each one's calls in turn). */
  concurrency: number;
  /** Replaces the recorded system prompt (and the per-agent default where none was recorded). */
  systemPrompt?: string;
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  /** A session of the run is finished: every turn it will get was asked (for progress). */
  onSession?: (event: SessionEnd) => void;
  /** How tool results are shown: repeats elided, long ones cut. Absent: as recorded. */
  shown?: ShownSettings;
}

/** How a session of a run ended; `note` says why one was not replayed. */
export interface SessionEnd {
  sessionId: string;
  status: 'done' | 'diverged' | 'failed';
  note?: string;
}

export interface ForcedRun extends ReplayRun {
  /** Turns already in the pairs file or finished in the store: not asked again. */
  done: ReadonlySet<string>;
}

interface Job {
  session: Session;
  turn: Turn;
  number: number;
  messages: ChatMessage[];
  tools: Pair['tools'];
  sources: PairSources;
  errors: string[];
  wire?: Wire;
  elided: number;
  cut: number;
  bytesSaved: number;
  /** The session's last turn to ask in this run. */
  last?: boolean;
  /** The UTF-8 of `JSON.stringify(messages)`, made once for the request, the digest and the pair line. */
  messagesParts?: JsonParts;
}

/** How a session's calls are compared: paths relative to its cwd, arguments at the catalogue's defaults. */
export function matching(session: Session): NormalizeContext {
  return {
    ...(session.cwd ? { cwd: session.cwd } : {}),
    defaults: (tool) => toolDefaults(session.agent, tool),
    commentary: (tool) => toolCommentary(session.agent, tool),
  };
}

/** The session's recorded results, handed out call by call, compared as `matching` compares (every driver's). */
export function shortCircuitOf(session: Session): ShortCircuit {
  return new ShortCircuit(session.messages, {
    ...matching(session),
    readOnly: (tool) => isReadOnly(session.agent, tool),
  });
}

/**
 * Forced mode (teacher forcing): every original assistant turn is asked again with its original context. Turns
 * are independent, so up to `concurrency` are in flight at once; results are written in order, so memory is
 * bounded by the window, not by the number of sessions. A failed turn is recorded and the run goes on; a
 * fatal provider error (wrong key, unknown model) stops it.
 */
export async function replayForced(run: ForcedRun): Promise<void> {
  const window: { job: Job; result: Promise<Completion | ProviderError> }[] = [];
  let fatal: ProviderError | undefined;
  const controller = new AbortController();
  // Each call in flight links its own signal to this one (see `linked`): that many listeners is expected.
  setMaxListeners(Math.max(10, run.concurrency + 10), controller.signal);

  const settle = async (): Promise<void> => {
    const head = window.shift();
    if (!head) return;
    const outcome = await head.result;
    if (outcome instanceof ProviderError && outcome.fatal) {
      fatal ??= outcome;
      controller.abort();
      return;
    }
    record(run, head.job, outcome);
  };

  for (const job of marked(jobs(run))) {
    if (fatal) break;
    const started = performance.now();
    // One signal per call, tied to the run's: the SDKs add an abort listener to the signal they are given and
    // never remove it, so a signal shared by every call would gather one listener per turn (memory, and
    // adding each is slower than the last).
    const call = linked(controller.signal);
    job.messagesParts = itemsParts(job.messages);
    // One buffer, copied into the body and the pair line and hashed in one piece.
    job.messagesParts.concat();
    const result = run.provider
      .complete(
        {
          messages: job.messages,
          tools: job.tools,
          session: job.session,
          original: job.turn,
          ...(job.wire ? { wire: job.wire } : {}),
          messagesParts: job.messagesParts,
        },
        call.signal,
      )
      .then((completion) => Object.assign(completion, { latencyMs: Math.round(performance.now() - started) }))
      .catch((error: unknown) =>
        error instanceof ProviderError ? error : new ProviderError((error as Error).message ?? String(error)),
      )
      .finally(call.release);
    window.push({ job, result });
    if (window.length >= run.concurrency) await settle();
  }
  while (window.length > 0 && !fatal) await settle();
  if (fatal) {
    // Let the calls already sent finish or fail before reporting; none of them is recorded as done.
    await Promise.allSettled(window.map((entry) => entry.result));
    throw fatal;
  }
}

/** Marks each session's last job, looking one job ahead (jobs come session by session). */
function* marked(all: Iterable<Job>): Generator<Job> {
  let previous: Job | undefined;
  for (const job of all) {
    if (previous) yield Object.assign(previous, { last: previous.session.id !== job.session.id });
    previous = job;
  }
  if (previous) yield Object.assign(previous, { last: true });
}

/** A signal aborted with `parent`, whose link to it is dropped by `release` once the call has settled. */
function linked(parent: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  parent.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', abort) };
}

const toolDigests = new WeakMap<object, string>();

/**
 * A digest of the request body: the model, the messages and the tools offered. The messages are built by us in
 * a fixed key order, so plain JSON is canonical here; the tools, the same for every turn of a session and half
 * of each request, are hashed once per list.
 */
export function requestDigest(
  model: string,
  messages: readonly ChatMessage[],
  tools: Pair['tools'],
  messagesParts: JsonParts = itemsParts(messages),
): string {
  let tooled = toolDigests.get(tools);
  if (tooled === undefined) {
    tooled = sha256(JSON.stringify(tools));
    toolDigests.set(tools, tooled);
  }
  // sha256 of `${model}\0${tooled}\0${JSON.stringify(messages)}`, fed the messages' bytes piece by piece.
  const digest = createHash('sha256').update(`${model}\0${tooled}\0`);
  for (const piece of messagesParts.done()) digest.update(piece);
  return digest.digest('hex');
}

function* jobs(run: ForcedRun): Generator<Job> {
  for (const id of run.sessionIds) {
    const loaded = run.sessions.load(id);
    if (!loaded) continue;
    const { session, own } = loaded;
    // Read only (converted once per list): the shared specs, not a copy per session.
    const catalogueTools = sharedToolsFor(session);
    const shown = elideOptions(session.agent, run.shown);
    // The requests Claude Code recorded (2.1.3xx), by the response each one produced.
    const requests =
      session.agent === 'claude-code'
        ? run.sessions.loadRequests(id, session.messages).byResponse
        : undefined;
    let asked = 0;
    for (const turn of turns(session.messages, own)) {
      const number = turn.index + 1;
      if (run.done.has(turnKey(session.id, number))) continue;
      asked++;
      const nativeId = turn.response.nativeId;
      const recorded = nativeId !== undefined ? requests?.get(nativeId) : undefined;
      const request = askedWith(session, turn.context, {
        catalogueTools,
        ...(recorded ? { recorded } : {}),
        ...(run.systemPrompt !== undefined ? { systemPrompt: run.systemPrompt } : {}),
        ...(shown ? { shown } : {}),
      });
      const saved = savings(request.fates);
      yield {
        session,
        turn,
        number,
        messages: request.messages,
        tools: request.tools,
        sources: request.sources,
        errors: request.errors,
        ...(request.wire ? { wire: request.wire } : {}),
        elided: saved.elided,
        cut: saved.truncated,
        bytesSaved: saved.bytesSaved,
      };
    }
    // Nothing to ask (no model turn, or all done before a resume): finished as soon as it is reached.
    if (asked === 0) sessionDone(run, session.id);
  }
}

/** Every turn of the session was asked: the store says so (as free mode's and the agents' runs do), then progress. */
function sessionDone(run: ForcedRun, sessionId: string): void {
  run.runs.setSessionStatus(run.runId, sessionId, 'done');
  run.onSession?.({ sessionId, status: 'done' });
}

function record(
  run: ForcedRun,
  job: Job,
  outcome: (Completion & { latencyMs?: number }) | ProviderError,
): void {
  const { session, turn, number, messages, tools } = job;
  // The messages' JSON is made once, for the request, the digest and the pair line.
  const messagesParts = job.messagesParts ?? itemsParts(messages);
  const digest = requestDigest(run.model, messages, tools, messagesParts);
  const original = assistantMessage(turn.response);
  if (outcome instanceof ProviderError) {
    run.runs.saveTurn(run.runId, {
      sessionId: session.id,
      turn: number,
      status: 'failed',
      requestDigest: digest,
      callsPredicted: 0,
      callsOriginal: original.tool_calls?.length ?? 0,
      callsMatched: 0,
      error: outcome.message,
      resultsElided: job.elided,
      resultsCut: job.cut,
      bytesSaved: job.bytesSaved,
    });
    run.onTurn?.({ sessionId: session.id, turn: number, ok: false });
    if (job.last) sessionDone(run, session.id);
    return;
  }
  const calls = compareCalls(outcome.message.tool_calls ?? [], original.tool_calls ?? [], matching(session));
  const usage = {
    prompt_tokens: outcome.usage?.prompt_tokens ?? 0,
    completion_tokens: outcome.usage?.completion_tokens ?? 0,
  };
  const pair: Pair = {
    schema: pairSchema,
    run: run.runId,
    session: session.id,
    agent: session.agent,
    turn: number,
    mode: 'forced',
    model: run.model,
    messages,
    tools,
    completion: outcome.message,
    original,
    match: { tool_calls: calls.match },
    usage,
    latency_ms: outcome.latencyMs ?? 0,
    finish_reason: outcome.finishReason ?? null,
    sources: job.sources,
    tool_errors: job.errors,
    ...(job.wire ? { wire: job.wire } : {}),
  };
  // The pair first: on a kill between the two writes, resume finds the pair in the file and does not ask again.
  run.writer.write(pair, { messages: messagesParts });
  run.runs.saveTurn(run.runId, {
    sessionId: session.id,
    turn: number,
    status: 'ok',
    requestDigest: digest,
    response: outcome.message,
    match: calls.match,
    callsPredicted: calls.predicted,
    callsOriginal: calls.original,
    callsMatched: calls.matched,
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    latencyMs: outcome.latencyMs ?? 0,
    resultsElided: job.elided,
    resultsCut: job.cut,
    bytesSaved: job.bytesSaved,
  });
  run.onTurn?.({ sessionId: session.id, turn: number, ok: true });
  if (job.last) sessionDone(run, session.id);
}
