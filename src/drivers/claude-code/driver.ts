import { execa } from 'execa';
import {
  authorOf,
  type TurnRequest,
  toolResultOutput,
  type WireBlock,
  type WireMessage,
  wireBody,
} from '../../model/request.js';
import type { Message, Session, ToolResult } from '../../model/session.js';
import { type Turn, turns } from '../../model/turns.js';
import { assistantMessage, type ChatMessage, type ChatToolCall } from '../../replay/chat.js';
import { Elider, elideOptions, type ShownSettings, savings } from '../../replay/elide.js';
import { matching, type SessionEnd, shortCircuitOf } from '../../replay/engine.js';
import { missMessage } from '../../replay/free.js';
import { compareCalls } from '../../replay/match.js';
import { type Pair, type PairsWriter, pairSchema } from '../../replay/pairs.js';
import type { ShortCircuit } from '../../replay/shortcircuit.js';
import { type AnthropicWire, chatFromWire, messageBlocks, outputBlocks } from '../../replay/wire.js';
import type { RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { confined } from '../common/confine.js';
import { newSecret, redact } from '../common/loopback.js';
import { promptsOf, rebase } from '../common/prompts.js';
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
import { mappedAgents } from '../opencode/mapping.js';
import { type AnthropicMessage, chatCompletion, finishReason } from '../wire/anthropic-messages.js';
import { prepareClaudeEnvironment } from './environment.js';
import { differences, fromRecording, systemFromRecording } from './harness.js';
import { claudeCall, recordedFor } from './mapping.js';
import { standIns } from './mcp.js';
import { type Answered, type ClaudeExchange, type ClaudeUpstream, startClaudeProxy } from './proxy.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

export type ClaudeModel =
  | { kind: 'recorded' }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface ClaudeReplay {
  runId: string;
  /** The model as the run names it (`recorded`, `anthropic:claude-…`): what pairs carry. */
  model: string;
  upstream: ClaudeModel;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Sessions at once, each its own Claude Code, proxy and private environment. */
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
  /**
   * Run Claude Code against this copy-on-write view of the checked directories (the side-effect checker's):
   * whatever it writes lands in the view's layers, which are the record of it, never in the real files.
   */
  view?: Pick<CopyOnWrite, 'wrap'>;
  /** Instead of the view: run Claude Code under bubblewrap with these paths read-only (the workspace added). */
  sandbox?: { readOnly: string[]; bwrap?: string };
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  onSession?: (event: SessionEnd) => void;
  onNote?: (text: string) => void;
}

/** Claude Code 2.1.328's own tools (`--tools` takes only these); a placeholder it adds is none of them. */
const builtins = new Set([
  'Agent',
  'Bash',
  'Edit',
  'Glob',
  'Grep',
  'NotebookEdit',
  'Read',
  'TodoWrite',
  'WebFetch',
  'WebSearch',
  'Write',
]);

/**
 * The tools to start Claude Code with: those the session was offered (its first recorded request), else the
 * built-ins it called and the four every session has.
 */
export function offeredTools(
  requestTools: readonly unknown[] | undefined,
  messages: readonly Message[],
  agent = 'claude-code',
): string[] {
  const named = (requestTools ?? []).map((tool) => String((tool as { name?: unknown }).name ?? ''));
  if (named.length > 0) return named.filter((name) => builtins.has(name));
  const called = new Set(['Bash', 'Edit', 'Read', 'Write']);
  for (const message of messages)
    for (const part of message.parts) {
      if (part.type !== 'tool_call') continue;
      const name = claudeCall(agent, part.name, part.input)?.name ?? part.name;
      if (builtins.has(name)) called.add(name);
    }
  return [...called].sort();
}

/**
 * The recorded answer of a turn as the Anthropic message a recorded model streams, its calls named as Claude
 * Code names them when the session is another agent's (one with no counterpart keeps its recorded name).
 */
export function recordedMessage(turn: Turn, number: number, agent = 'claude-code'): AnthropicMessage {
  const content = messageBlocks(turn.response)
    .filter((block) => ['text', 'thinking', 'redacted_thinking', 'tool_use'].includes(block.type))
    .map((block) => {
      if (block.type !== 'tool_use') return block;
      const named = claudeCall(agent, String(block.name), block.input);
      return named ? { ...block, name: named.name, input: named.input } : block;
    });
  return {
    id: `msg_replay_${number}`,
    model: turn.response.model ?? 'recorded',
    content,
    stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    usage: {
      input_tokens: turn.response.usage?.inputTokens ?? 0,
      output_tokens: turn.response.usage?.outputTokens ?? 0,
    },
  };
}

export async function replayClaudeCode(run: ClaudeReplay): Promise<void> {
  await forEachSession(run, (id) => claudeSession(run, id));
}

/**
 * One conversation Claude Code holds with the model during a session's replay: the session's own (`main`),
 * or a sub-agent's, run in place by its parent's Agent call. Each has its recording: its turns, the results
 * its calls get, its recorded requests, and how far the replay has come.
 */
interface Conversation {
  session: Session;
  recordedTurns: Turn[];
  originals: Assistant[];
  circuit: ShortCircuit;
  /** Recorded `tool_result` blocks by call id, exactly as Claude Code sent them (request records). */
  blocks: Map<string, WireBlock>;
  /** Where each recorded result came among the conversation's results: the order Claude Code listed them. */
  order: Map<string, number>;
  byResponse: Map<string, TurnRequest>;
  /** The recorded turns this conversation answers now: a prompt's (main), or all of them (a sub-agent). */
  turns: number[];
  /** Recorded turns served (`--model recorded`) and steps asked, within `turns`. */
  served: number;
  asked: number;
  /** Pairs written for it. */
  steps: number;
  /** Model calls it may make (--max-turns × its recorded turns). */
  budget: number;
  /** --elide-repeats / --max-result-bytes over what this conversation's model is shown, and what it did. */
  elider?: Elider;
  saved: { elided: number; cut: number; bytesSaved: number };
}

function conversationOf(run: ClaudeReplay, session: Session, own: number): Conversation {
  const recordedTurns = [...turns(session.messages, own)];
  const shown = elideOptions(session.agent, run.shown);
  const { byResponse } = run.sessions.loadRequests(session.id);
  const blocks = new Map<string, WireBlock>();
  for (const request of byResponse.values())
    for (const message of request.messages)
      if (message.role === 'user' && Array.isArray(message.content))
        for (const block of message.content)
          if (block.type === 'tool_result') blocks.set(String(block.tool_use_id), block);
  // Claude Code's order where its requests were recorded (the transcript's lines may be in another), then the
  // transcript's.
  const order = new Map<string, number>();
  for (const id of blocks.keys()) order.set(id, order.size);
  for (const message of session.messages)
    for (const part of message.parts)
      if (part.type === 'tool_result' && !order.has(part.callId)) order.set(part.callId, order.size);
  return {
    session,
    recordedTurns,
    originals: recordedTurns.map((turn) => assistantMessage(turn.response)),
    circuit: shortCircuitOf(session),
    blocks,
    order,
    byResponse,
    turns: recordedTurns.map((_, index) => index),
    served: 0,
    asked: 0,
    steps: 0,
    budget: Math.max(1, Math.ceil(recordedTurns.length * run.maxTurnsFactor)),
    ...(shown ? { elider: new Elider(shown) } : {}),
    saved: { elided: 0, cut: 0, bytesSaved: 0 },
  };
}

/**
 * A result block as the conversation's model is shown it: with --elide-repeats a repeat of an identical
 * read-only result becomes the marker, with --max-result-bytes a long one is cut. Keyed by the recorded call
 * (its name and arguments in the recording), marked with the live call's id (the one the model sees).
 */
function shownBlock(
  conversation: Conversation,
  block: WireBlock,
  callId: string,
  name: string,
  candidates: readonly { name: string; input: unknown }[],
): WireBlock {
  const elider = conversation.elider;
  const recorded = candidates[0];
  if (!elider || !recorded) return block;
  elider.call(callId, recorded.name, recorded.input);
  const result: ToolResult = {
    type: 'tool_result',
    callId,
    name: recorded.name ?? name,
    output: toolResultOutput(block.content),
    isError: block.is_error === true,
  };
  const { shown, fate } = elider.result(result);
  const saved = savings([fate]);
  conversation.saved.elided += saved.elided;
  conversation.saved.cut += saved.truncated;
  conversation.saved.bytesSaved += saved.bytesSaved;
  return shown === result ? block : { ...block, content: outputBlocks(shown.output) };
}

/** What the user typed in the request's first user message (harness text left out): a conversation's mark. */
function openingText(messages: readonly WireMessage[]): string {
  const first = messages.find((message) => message.role === 'user');
  if (!first) return '';
  const { injectedBlocks, by } = authorOf(first);
  if (by === 'harness') return '';
  if (typeof first.content === 'string') return first.content;
  const skipped = new Set(injectedBlocks ?? []);
  return first.content
    .filter((block, index) => block.type === 'text' && !skipped.has(index))
    .map((block) => String(block.text ?? ''))
    .join('\n');
}

async function claudeSession(run: ClaudeReplay, id: string): Promise<void> {
  const loaded = run.sessions.load(id);
  if (!loaded) return;
  const { session, own } = loaded;
  const skip = (why: string, status: 'done' | 'failed' = 'failed'): void =>
    endUnreplayed(run, session.id, why, status);
  if (
    session.agent !== 'claude-code' &&
    !mappedAgents.includes(session.agent) &&
    session.agent !== 'opencode'
  )
    return skip(`not replayed: no mapping of ${session.agent}'s tools to Claude Code's`);
  // Not a failure: it is replayed in place, within its parent, when its parent is.
  if (session.kind === 'subagent') return skip('a sub-agent: replayed within its parent', 'done');
  const main = conversationOf(run, session, own);
  const prompts = promptsOf(session.messages, own, main.recordedTurns);
  const workspace = run.workspace ?? session.cwd ?? undefined;
  if (!usableWorkspace(workspace)) return skip(unusableWorkspace(workspace));
  if (prompts.length === 0) return skip('not replayed: no user message to start from');
  const recordedCwd = session.cwd ?? workspace;
  const firstShape = [...main.byResponse.values()].find((request) => request.tools.length > 0);
  const tools = offeredTools(firstShape?.tools, session.messages, session.agent);
  const children = run.sessions.subagents(session.id);
  // A sub-agent's own messages: the history it shares with its parent, if any, was scanned with the parent's.
  const mcp = standIns(firstShape?.tools, [
    ...session.messages,
    ...children.flatMap((child) => run.sessions.messages(child.id)),
  ]);
  if (mcp.guessed.length > 0)
    run.onNote?.(
      `${session.id.slice(0, 12)}: ${mcp.guessed.join(', ')} offered with a schema that takes any object: the recording has no definition of ${mcp.guessed.length === 1 ? 'it' : 'them'}`,
    );

  // Sub-agents run in place: each recorded one by the recorded call that started it, its conversation known
  // by the prompt the live Agent call gives it (the first thing Claude Code sends the sub-agent's model).
  const spawned = new Map(
    children.flatMap((child) => (child.toolCallId ? [[child.toolCallId, child.id] as const] : [])),
  );
  const conversations = new Map<string, Conversation>([['main', main]]);
  const byOpening = new Map<string, string>();

  const budget = main.budget;
  const processTimeout = run.timeoutMs * (budget + 2) + 60_000;
  let summaries = session.messages.filter((message) => message.compaction);
  let stopped: string | undefined;
  let lastError: string | undefined;
  let exhausted = 0;
  let status: 'done' | 'diverged' | 'failed' = 'done';

  const answer = (call: { id: string; name: string; input: unknown }, key: string): Answered => {
    const conversation = conversations.get(key) ?? main;
    const input = rebase(call.input, workspace, recordedCwd);
    // Another agent's recording names its calls its own way (mapping.ts); a call with no counterpart is tried
    // as it is (a recorded call Claude Code could not make, served by --model recorded).
    const candidates = [...recordedFor(session.agent, call.name, input)];
    if (!candidates.some((candidate) => candidate.name === call.name))
      candidates.push({ name: call.name, input });
    let tried: ReturnType<ShortCircuit['answer']> = { kind: 'miss', nearest: [] };
    for (const [index, candidate] of candidates.entries()) {
      const attempt = conversation.circuit.answer(candidate.name, candidate.input);
      if (index === 0 || attempt.kind === 'hit') tried = attempt;
      if (attempt.kind === 'hit') break;
    }
    if (tried.kind === 'hit') {
      const recordedId = tried.result.callId;
      // The Agent call that started a recorded sub-agent: that sub-agent is replayed in place.
      const child = call.name === 'Agent' ? spawned.get(recordedId) : undefined;
      const prompt = (call.input as { prompt?: unknown } | null)?.prompt;
      if (child && typeof prompt === 'string' && !conversations.has(child)) {
        const loadedChild = run.sessions.load(child);
        if (loadedChild) {
          conversations.set(child, conversationOf(run, loadedChild.session, loadedChild.own));
          byOpening.set(prompt, child);
        }
      }
      const block: WireBlock = conversation.blocks.get(recordedId) ?? {
        type: 'tool_result',
        tool_use_id: recordedId,
        content: outputBlocks(tried.result.output),
        ...(tried.result.isError ? { is_error: true } : {}),
      };
      return {
        block: shownBlock(
          conversation,
          { ...block, tool_use_id: call.id },
          call.id,
          tried.result.name ?? call.name,
          candidates,
        ),
        order: conversation.order.get(recordedId) ?? Number.MAX_SAFE_INTEGER,
      };
    }
    run.runs.saveMiss(run.runId, {
      sessionId: conversation.session.id,
      // The step being answered: its pair is counted once its answer is assembled, after this.
      turn: conversation.steps + 1,
      call: { name: call.name, input: call.input },
      nearest: tried.nearest,
      policy: run.onMiss,
    });
    if (run.onMiss === 'stop')
      stopped ??= `replay-history: stopped (--on-miss stop): ${call.name} ${JSON.stringify(call.input)} is not in the recording`;
    const missed: WireBlock = {
      type: 'tool_result',
      tool_use_id: call.id,
      content: missMessage(call.name, tried.nearest),
      is_error: true,
    };
    // A miss is an error result to the model: it ends the baseline of what it asked for.
    return {
      block: shownBlock(conversation, missed, call.id, call.name, candidates),
      order: Number.MAX_SAFE_INTEGER,
    };
  };

  const upstream: ClaudeUpstream =
    run.upstream.kind === 'recorded'
      ? {
          kind: 'recorded',
          next: (kind, key) => {
            if (kind === 'compaction') {
              const [summary, ...rest] = summaries;
              summaries = rest;
              if (!summary) return undefined;
              return {
                id: `msg_replay_summary_${rest.length}`,
                model: 'recorded',
                content: messageBlocks(summary).filter((block) => block.type === 'text'),
                stop_reason: 'end_turn',
                usage: {},
              };
            }
            const conversation = conversations.get(key) ?? main;
            const at = conversation.turns[conversation.served];
            const turn = at === undefined ? undefined : conversation.recordedTurns[at];
            if (!turn) return undefined;
            conversation.served++;
            return recordedMessage(turn, conversation.served, conversation.session.agent);
          },
        }
      : run.upstream;

  const onExchange = (exchange: ClaudeExchange): void => {
    const conversation = conversations.get(exchange.conversation) ?? main;
    // Claude Code compacted: its model no longer sees any earlier result, so none may be pointed at.
    if (exchange.kind === 'compaction' && exchange.message) conversation.elider?.reset();
    if (exchange.exhausted) {
      if (conversation === main) exhausted++;
      return;
    }
    if (exchange.kind !== 'step' || exchange.refused) return;
    if (exchange.error !== undefined || !exchange.message) {
      if (conversation === main) lastError = exchange.error ?? 'no answer';
      return;
    }
    if (conversation === main) lastError = undefined;
    const owner = conversation.session;
    const turn = ++conversation.steps;
    const at = conversation.turns[conversation.asked++];
    const original = at === undefined ? null : (conversation.originals[at] ?? null);
    const { metadata: _metadata, stream: _stream, ...body } = exchange.request;
    const wire: AnthropicWire = {
      api: 'anthropic-messages',
      source: 'agent',
      body: body as AnthropicWire['body'],
      betas: exchange.betas,
    };
    const chat = chatFromWire(wire);
    const completion = chatCompletion(exchange.message);
    // The model's calls as the recording would name them, for comparing with the original's.
    // Of several names a call may have in the recording, the one the original turn used.
    const used = new Set((original?.tool_calls ?? []).map((call) => call.function.name));
    const made: ChatToolCall[] = (completion.tool_calls ?? []).map((call) => {
      const input = rebase(JSON.parse(call.function.arguments), workspace, recordedCwd);
      const candidates = recordedFor(owner.agent, call.function.name, input);
      const named = candidates.find((candidate) => used.has(candidate.name)) ??
        candidates[0] ?? { name: call.function.name, input };
      return { ...call, function: { name: named.name, arguments: JSON.stringify(named.input) } };
    });
    const match = compareCalls(made, original?.tool_calls ?? [], matching(owner));
    const usage = {
      prompt_tokens: Number(exchange.message.usage.input_tokens ?? 0),
      completion_tokens: Number(exchange.message.usage.output_tokens ?? 0),
    };
    const pair: Pair = {
      schema: pairSchema,
      run: run.runId,
      session: owner.id,
      agent: owner.agent,
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
      finish_reason: finishReason(exchange.message.stop_reason),
      sources: { system: 'agent', tools: 'agent' },
      tool_errors: chat.errors,
      wire,
      ...(exchange.differs ? { differs_from_recording: exchange.differs } : {}),
    };
    recordStep(run, pair, match, conversation.saved);
  };

  const secret = newSecret();
  const proxy = await startClaudeProxy({
    secret,
    upstream,
    answer,
    onExchange,
    classify: (request) => byOpening.get(openingText(request.messages)) ?? 'main',
    // The step being asked answers the conversation's next recorded turn: its recorded request, if any.
    rewrite: (request, key) => {
      const conversation = conversations.get(key) ?? main;
      const at = conversation.turns[conversation.asked];
      const nativeId = at === undefined ? undefined : conversation.recordedTurns[at]?.response.nativeId;
      const recorded = nativeId === undefined ? undefined : conversation.byResponse.get(nativeId);
      if (recorded?.fidelity !== 'exact') return undefined;
      const body = wireBody(recorded).body as {
        system: WireBlock[];
        tools: unknown[];
        messages: WireMessage[];
      };
      const { messages, differs } = fromRecording(request.messages, body.messages);
      const system = Array.isArray(request.system)
        ? systemFromRecording(request.system as WireBlock[], body.system)
        : request.system;
      const rewritten = { ...request, ...(system !== undefined ? { system } : {}), messages };
      return { request: rewritten, differs: differences(rewritten, body, differs) };
    },
    timeoutMs: run.timeoutMs,
    refuse: (kind, key) => {
      if (kind !== 'step') return undefined;
      const { steps, budget: allowed } = conversations.get(key) ?? main;
      return stepRefusal(stopped, steps, allowed);
    },
  });
  const environment = prepareClaudeEnvironment({
    workspace,
    baseURL: proxy.url,
    apiKey: secret,
    tools,
    mcp: mcp.servers,
  });
  try {
    let claudeSessionId: string | undefined;
    for (const [index, prompt] of prompts.entries()) {
      main.turns = prompt.turns;
      main.served = 0;
      main.asked = 0;
      const exhaustedBefore = exhausted;
      const args = [
        ...environment.args,
        ...(claudeSessionId ? ['--resume', claudeSessionId] : []),
        '-p',
        prompt.text,
      ];
      // Under the watchdog: should this process die without cleaning up, Claude Code is stopped too.
      const watched = [environment.watchdog, String(process.pid), run.binary, ...args];
      const argv = confined(watched, run, { sessionId: session.id, workspace, root: environment.root });
      const child = await execa(argv[0] as string, argv.slice(1), {
        cwd: workspace,
        env: environment.env,
        extendEnv: false,
        stdin: 'ignore',
        reject: false,
        timeout: processTimeout,
        forceKillAfterDelay: 2_000,
        maxBuffer: 256 * 1024 * 1024,
      });
      const events = jsonEvents(String(child.stdout ?? ''));
      claudeSessionId ??= events.find((event) => typeof event.session_id === 'string')?.session_id as
        | string
        | undefined;
      if (stopped) {
        status = 'diverged';
        break;
      }
      if (main.steps >= budget && index < prompts.length - 1) {
        run.onNote?.(`${session.id.slice(0, 12)}: stopped at the budget of ${budget} model calls`);
        break;
      }
      const ranOut =
        run.upstream.kind === 'recorded' && exhausted > exhaustedBefore && lastError === undefined;
      const failed = child.exitCode !== 0 || lastError !== undefined || !claudeSessionId;
      if (failed && !ranOut) {
        const tail = String(child.stderr ?? '')
          .trim()
          .split('\n')
          .slice(-5)
          .join('\n');
        const said = events.find((event) => event.type === 'result' && event.subtype !== 'success')?.result;
        const why = redact(
          lastError ??
            (child.timedOut
              ? `claude did not finish within ${Math.round(processTimeout / 1000)} s`
              : `claude exited with ${child.exitCode ?? child.signal}${said ? `: ${String(said)}` : ''}${tail ? `\n${tail}` : ''}`),
          secret,
        );
        failTurn(run, session.id, main.steps + 1, main.originals[main.steps]?.tool_calls?.length ?? 0, why);
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
