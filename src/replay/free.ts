import { type Message, outputText, type ToolResult } from '../model/session.js';
import { turns } from '../model/turns.js';
import { toolsFor } from './catalogue/index.js';
import { assistantMessage, type ChatMessage, chatMessages, chatTools } from './chat.js';
import { recordedSystemPrompt, requestMessages } from './context.js';
import { callKey, Elider, elideOptions, type ResultFate, savings, showThrough } from './elide.js';
import { matching, type ReplayRun, requestDigest, shortCircuitOf } from './engine.js';
import { compareCalls } from './match.js';
import { type PairSources, pairSchema } from './pairs.js';
import { type Completion, ProviderError, RecordingExhausted } from './providers/types.js';
import type { NearCall } from './shortcircuit.js';
import { chatToolsOf, systemText } from './wire.js';

export interface FreeRun extends ReplayRun {
  /** Answers of this run already in the pairs file, per session, in turn order: a resumed session goes on from them. */
  existing: ReadonlyMap<string, { turn: number; completion: Assistant }[]>;
  onMiss: 'error' | 'stop';
  /** Model calls allowed per session, as a multiple of the original's turns (default 2). */
  maxTurnsFactor: number;
}

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

/** A call's arguments as the short-circuit takes them: JSON, or the raw text when it is not JSON. */
function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return { raw };
  }
}

/** What the model is told when it asks for a call the recording does not hold. */
export function missMessage(name: string, nearest: NearCall[]): string {
  const near = nearest
    .map(
      (call) =>
        `${call.name}(${JSON.stringify(call.input)})${call.differs.length ? ` — differs in ${call.differs.join(', ')}` : ''}`,
    )
    .join('; ');
  return (
    `Error: this is a replay and the result of ${name} with these arguments is not in the recording, so the tool ` +
    `was not run.${near ? ` Recorded calls closest to it: ${near}.` : ''}`
  );
}

/**
 * The user turns of the original, in order: each run of user messages the model did not produce. The model
 * gets the next one when it ends its turn (answers without a tool call). Compaction summaries are left out:
 * in free mode the model keeps its own whole history.
 */
export function userBlocks(messages: readonly Message[], from: number): Message[][] {
  const blocks: Message[][] = [];
  let current: Message[] | undefined;
  for (let i = from; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'user' || message.role === 'system') {
      if (message.compaction) continue;
      if (!current) {
        current = [];
        blocks.push(current);
      }
      current.push(message);
    } else if (message.role === 'assistant' && !message.injected) current = undefined;
  }
  return blocks;
}

/**
 * Free mode: the model drives from the first user message. Every tool call it makes is answered by the
 * short-circuit from the recording — never run. A call the recording does not hold is a miss: with
 * `--on-miss error` the model is told so in the tool result; with `stop` the session ends as diverged.
 */
export async function replayFree(run: FreeRun): Promise<void> {
  const queue = [...run.sessionIds];
  let fatal: ProviderError | undefined;
  const worker = async (): Promise<void> => {
    for (let id = queue.shift(); id !== undefined && !fatal; id = queue.shift()) {
      const status = run.runs.sessionStatus(run.runId, id);
      if (status && status !== 'pending' && status !== 'failed') continue;
      try {
        await freeSession(run, id);
      } catch (error) {
        if (error instanceof ProviderError && error.fatal) fatal ??= error;
        else throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, run.concurrency) }, worker));
  if (fatal) throw fatal;
}

async function freeSession(run: FreeRun, id: string): Promise<void> {
  const loaded = run.sessions.load(id);
  if (!loaded) return;
  const { session, own } = loaded;
  const recordedTurns = [...turns(session.messages, own)];
  const originals = recordedTurns.map((turn) => assistantMessage(turn.response));
  const blocks = userBlocks(session.messages, own);
  // The system prompt and tools of the session's first recorded request (Claude Code 2.1.3xx), where there is one.
  const shape =
    session.agent === 'claude-code'
      ? [...run.sessions.loadRequests(id).byResponse.values()].find(
          (request) => !request.missing.some((hash) => hash.startsWith('shape:')),
        )
      : undefined;
  const tools = shape ? chatToolsOf(shape.tools) : chatTools(toolsFor(session));
  const systemPrompt = run.systemPrompt ?? (shape ? systemText(shape.system) : undefined);
  const sources: PairSources = {
    system:
      run.systemPrompt !== undefined
        ? 'option'
        : shape || recordedSystemPrompt(session)
          ? 'recorded'
          : 'catalogue',
    tools: shape ? 'recorded' : 'catalogue',
  };
  /** Call ids whose result, as shown in the live context, is an error. */
  const errors: string[] = [];
  const circuit = shortCircuitOf(session);
  const budget = Math.max(1, Math.ceil(originals.length * run.maxTurnsFactor));
  // --elide-repeats / --max-result-bytes over the live context, which only grows: one elider for the session.
  const shown = elideOptions(session.agent, run.shown);
  const elider = shown ? new Elider(shown) : undefined;
  const totals = { elided: 0, cut: 0, bytesSaved: 0 };
  const tally = (fates: ResultFate[]) => {
    const saved = savings(fates);
    totals.elided += saved.elided;
    totals.cut += saved.truncated;
    totals.bytesSaved += saved.bytesSaved;
  };
  /** What the model is shown for a result given to one of its calls. */
  const show = (callId: string, name: string, result: ToolResult): string => {
    if (!elider) return outputText(result.output);
    const { shown: out, fate } = elider.result({ ...result, callId, name });
    tally([fate]);
    return outputText(out.output);
  };
  /** Calls of a completion that ask again for what the model was shown as a marker. */
  const reasks = (completion: Assistant): number =>
    elider
      ? (completion.tool_calls ?? []).filter((call) =>
          elider.elided(callKey(call.function.name, parseArguments(call.function.arguments))),
        ).length
      : 0;

  // The opening context: what came before the first user turn (inherited history, a recorded system
  // prompt), with the system prompt as a forced-mode turn would have it, then the first user turn.
  const opening = session.messages.slice(0, own).concat(blocks[0] ?? []);
  const openingShown = elider ? showThrough(elider, opening) : { messages: opening, fates: [] };
  tally(openingShown.fates);
  const context: ChatMessage[] = requestMessages(session, openingShown.messages, systemPrompt);
  for (const message of openingShown.messages)
    for (const part of message.parts)
      if (part.type === 'tool_result' && part.isError) errors.push(part.callId);
  let next = 1;
  let number = 0;

  /** Applies one model answer to the conversation: tool results from the recording, or the next user turn. */
  const apply = (completion: Assistant, live: boolean): 'go' | 'end' | 'diverged' => {
    context.push(completion);
    const calls = completion.tool_calls ?? [];
    if (calls.length === 0) {
      const block = blocks[next++];
      if (!block) return 'end';
      const blockShown = elider ? showThrough(elider, block) : { messages: block, fates: [] };
      tally(blockShown.fates);
      context.push(...chatMessages(blockShown.messages));
      for (const message of blockShown.messages)
        for (const part of message.parts)
          if (part.type === 'tool_result' && part.isError) errors.push(part.callId);
      return 'go';
    }
    for (const call of calls) {
      const input = parseArguments(call.function.arguments);
      elider?.call(call.id, call.function.name, input);
      const answer = circuit.answer(call.function.name, input);
      if (answer.kind === 'hit') {
        if (answer.result.isError) errors.push(call.id);
        context.push({
          role: 'tool',
          tool_call_id: call.id,
          content: show(call.id, call.function.name, answer.result),
        });
        continue;
      }
      if (live) {
        run.runs.saveMiss(run.runId, {
          sessionId: session.id,
          turn: number,
          call: { name: call.function.name, input },
          nearest: answer.nearest,
          policy: run.onMiss,
        });
      }
      if (run.onMiss === 'stop') return 'diverged';
      const miss = missMessage(call.function.name, answer.nearest);
      errors.push(call.id);
      context.push({
        role: 'tool',
        tool_call_id: call.id,
        content: show(call.id, call.function.name, {
          type: 'tool_result',
          callId: call.id,
          output: miss,
          isError: true,
        }),
      });
    }
    return 'go';
  };

  // A resumed session: replay the answers already in the file through the same steps, asking nothing.
  let state: 'go' | 'end' | 'diverged' = 'go';
  for (const pair of run.existing.get(session.id) ?? []) {
    number = pair.turn;
    state = apply(pair.completion, false);
    if (state !== 'go') break;
  }

  while (state === 'go' && number < budget) {
    number++;
    const messages = context.slice();
    const shownSoFar = { ...totals };
    const started = performance.now();
    let completion: Completion;
    try {
      // The n-th original turn goes along: the `recorded` provider answers with it, which replays the
      // original trajectory exactly — a check that the short-circuit hands back every recorded result.
      const original = recordedTurns[number - 1];
      completion = await run.provider.complete({
        messages,
        tools,
        session,
        ...(original ? { original } : {}),
      });
    } catch (error) {
      if (error instanceof RecordingExhausted) {
        number--;
        break;
      }
      const failure =
        error instanceof ProviderError ? error : new ProviderError(String((error as Error).message ?? error));
      if (failure.fatal) throw failure;
      run.runs.saveTurn(run.runId, {
        sessionId: session.id,
        turn: number,
        status: 'failed',
        requestDigest: requestDigest(run.model, messages, tools),
        callsPredicted: 0,
        callsOriginal: originals[number - 1]?.tool_calls?.length ?? 0,
        callsMatched: 0,
        error: failure.message,
        resultsElided: shownSoFar.elided,
        resultsCut: shownSoFar.cut,
        bytesSaved: shownSoFar.bytesSaved,
      });
      run.runs.setSessionStatus(run.runId, session.id, 'failed');
      run.onTurn?.({ sessionId: session.id, turn: number, ok: false });
      run.onSession?.({ sessionId: session.id, status: 'failed' });
      return;
    }
    const latency = Math.round(performance.now() - started);
    const original = originals[number - 1] ?? null;
    const match = compareCalls(
      completion.message.tool_calls ?? [],
      original?.tool_calls ?? [],
      matching(session),
    );
    const usage = {
      prompt_tokens: completion.usage?.prompt_tokens ?? 0,
      completion_tokens: completion.usage?.completion_tokens ?? 0,
    };
    run.writer.write({
      schema: pairSchema,
      run: run.runId,
      session: session.id,
      agent: session.agent,
      turn: number,
      mode: 'free',
      model: run.model,
      messages,
      tools,
      completion: completion.message,
      original,
      match: { tool_calls: match.match },
      usage,
      latency_ms: latency,
      finish_reason: completion.finishReason ?? null,
      sources,
      tool_errors: errors.slice(),
    });
    run.runs.saveTurn(run.runId, {
      sessionId: session.id,
      turn: number,
      status: 'ok',
      requestDigest: requestDigest(run.model, messages, tools),
      response: completion.message,
      match: match.match,
      callsPredicted: match.predicted,
      callsOriginal: match.original,
      callsMatched: match.matched,
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      latencyMs: latency,
      resultsElided: shownSoFar.elided,
      resultsCut: shownSoFar.cut,
      bytesSaved: shownSoFar.bytesSaved,
      reasks: reasks(completion.message),
    });
    run.onTurn?.({ sessionId: session.id, turn: number, ok: true });
    state = apply(completion.message, true);
  }
  run.runs.setSessionStatus(run.runId, session.id, state === 'diverged' ? 'diverged' : 'done');
  run.onSession?.({ sessionId: session.id, status: state === 'diverged' ? 'diverged' : 'done' });
}
