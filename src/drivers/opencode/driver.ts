// `replay --agent opencode`: the real opencode binary drives each session, from the first recorded user message
// on. Its every tool is our override, answered by the short-circuit over loopback (answers.ts); its model calls
// go through our recording proxy (proxy.ts) to the real model, or to the session's own recorded turns
// (recorded.ts), and each agent step becomes a pair. One opencode process per session (server.ts): each user
// message is a prompt to it in the same opencode session, sent once the previous one is idle and the proxy has
// delivered its last answer.

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolResult } from '../../model/session.js';
import { turns } from '../../model/turns.js';
import { assistantMessage, type ChatMessage, type ChatToolCall } from '../../replay/chat.js';
import {
  callKey,
  clearedOutputs,
  Elider,
  elideOptions,
  type ShownSettings,
  savings,
} from '../../replay/elide.js';
import { matching, type SessionEnd, shortCircuitOf } from '../../replay/engine.js';
import { compareCalls } from '../../replay/match.js';
import type { PairsWriter } from '../../replay/pairs.js';
import type { Answer } from '../../replay/shortcircuit.js';
import type { RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { confined } from '../common/confine.js';
import { newSecret, redact, socketFits } from '../common/loopback.js';
import { type Prompt, promptsOf, rebase, textOf } from '../common/prompts.js';
import {
  endUnreplayed,
  failTurn,
  forEachSession,
  recordStep,
  unusableWorkspace,
  usableWorkspace,
} from '../common/sessions.js';
import { watchdogScript } from '../common/watchdog.js';
import { type AnswerServer, type AnswerSource, startAnswerServer } from './answers.js';
import { makePrivateTree, prepareEnvironment } from './environment.js';
import { opencodeCall, type RecordedName, recordedNames } from './mapping.js';
import { orphanExitCode } from './plugin.js';
import { type Exchange, pairFromExchange, type RecordingProxy, startRecordingProxy } from './proxy.js';
import { exhaustedMessage, type RecordedModel, startRecordedModel } from './recorded.js';
import { descendants, OpencodeServer, ServerStartError } from './server.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

/** Where opencode's model calls go after the proxy. */
export type Upstream =
  | { kind: 'recorded' }
  | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

export interface OpencodeReplay {
  runId: string;
  /** The model as the run names it (`openai:gpt-4o-mini`, `recorded`): what pairs carry. */
  model: string;
  upstream: Upstream;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Sessions at once (each its own opencode server, proxy and answer server). */
  concurrency: number;
  onMiss: 'error' | 'stop';
  /** Model calls allowed per session, as a multiple of the original's turns. */
  maxTurnsFactor: number;
  /** The opencode binary. */
  binary: string;
  /** The tools to override: those this opencode offers (see probe.ts). Default: the plugin's pinned list. */
  tools?: readonly string[];
  /** Run every session here instead of its recorded cwd. */
  workspace?: string;
  /** Run opencode under bubblewrap with these paths read-only (the workspace is added). */
  sandbox?: { readOnly: string[]; bwrap?: string };
  /**
   * Run opencode against this copy-on-write view of the checked directories (the side-effect checker's): it
   * writes only to the view's layers, which are the record of what it wrote. Not with `sandbox`.
   */
  view?: Pick<CopyOnWrite, 'wrap'>;
  /** Per model call, ms. */
  timeoutMs: number;
  /** --elide-repeats / --max-result-bytes, applied to the results handed to opencode. */
  shown?: ShownSettings;
  /** --context-limit / --max-tokens: the model's limits as opencode is told them (it compacts by them). */
  limit?: { context: number; output: number };
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  onSession?: (event: SessionEnd) => void;
  /** Something a user should know (a session skipped, opencode's own error output). */
  onNote?: (text: string) => void;
}

/**
 * A call renamed by `map` (name and arguments), or as it is when its arguments are not JSON or `map` has no
 * counterpart for it.
 */
function renameCall(
  call: ChatToolCall,
  map: (name: string, input: unknown) => RecordedName | undefined,
): ChatToolCall {
  let input: unknown;
  try {
    input = JSON.parse(call.function.arguments);
  } catch {
    return call;
  }
  const renamed = map(call.function.name, input);
  return renamed
    ? { ...call, function: { name: renamed.name, arguments: JSON.stringify(renamed.input) } }
    : call;
}

/** A call of opencode's model as the recording would name it (for matching against the original's calls). */
function asRecorded(agent: string, call: ChatToolCall, workspace: string, recordedCwd: string): ChatToolCall {
  return renameCall(
    call,
    (name, input) => recordedNames(agent, name, rebase(input, workspace, recordedCwd))[0],
  );
}

/** A recorded answer of another agent with its calls named as opencode names them (`--model recorded`). */
function asOpencode(agent: string, message: Assistant): Assistant {
  if (agent === 'opencode' || !message.tool_calls) return message;
  return {
    ...message,
    tool_calls: message.tool_calls.map((call) =>
      renameCall(call, (name, input) => opencodeCall(agent, name, input)),
    ),
  };
}

/** Runs every session through opencode, `concurrency` at a time. A fatal error stops all. */
export async function replayOpencode(run: OpencodeReplay): Promise<void> {
  await forEachSession(run, (id) => opencodeSession(run, id));
}

async function opencodeSession(run: OpencodeReplay, id: string): Promise<void> {
  const loaded = run.sessions.load(id);
  if (!loaded) return;
  const { session, own } = loaded;
  const recordedTurns = [...turns(session.messages, own)];
  const originals: Assistant[] = recordedTurns.map((turn) => assistantMessage(turn.response));
  const prompts = promptsOf(session.messages, own, recordedTurns);
  const workspace = run.workspace ?? session.cwd ?? undefined;
  const skip = (why: string): void => endUnreplayed(run, session.id, why);
  if (!usableWorkspace(workspace)) return skip(unusableWorkspace(workspace));
  if (prompts.length === 0) return skip('not replayed: no user message to start from');
  // Replayed in a workspace elsewhere: the model's paths name the workspace, the recording's the recorded cwd.
  const recordedCwd = session.cwd ?? workspace;

  const circuit = shortCircuitOf(session);
  const budget = Math.max(1, Math.ceil(originals.length * run.maxTurnsFactor));
  // A whole `opencode run`: every step of the budget may take the per-call limit.
  const processTimeout = run.timeoutMs * (budget + 2) + 60_000;
  let steps = 0;
  /** The prompt being answered, and how many steps it has had: the n-th is compared with its n-th recorded turn. */
  let current: Prompt | undefined;
  let inPrompt = 0;
  let served = 0;
  const recordedFor = (position: number): number | undefined => current?.turns[position];
  let stopped: string | undefined;
  let lastError: string | undefined;
  let status: 'done' | 'diverged' | 'failed' = 'done';

  // --elide-repeats / --max-result-bytes: applied to each result as it is handed to opencode, which is what its
  // model is then shown. Keyed by the recorded call (read-only per the session's agent), marked with opencode's
  // call id (the one the model sees).
  const shownOptions = elideOptions(session.agent, run.shown);
  const elider = shownOptions ? new Elider(shownOptions) : undefined;
  const totals = { elided: 0, cut: 0, bytesSaved: 0 };
  const show = (callId: string, name: string, result: ToolResult): ToolResult => {
    if (!elider) return result;
    const { shown, fate } = elider.result({ ...result, callId, name });
    const saved = savings([fate]);
    totals.elided += saved.elided;
    totals.cut += saved.truncated;
    totals.bytesSaved += saved.bytesSaved;
    return shown;
  };
  let anonymous = 0;

  const source: AnswerSource = {
    answer(tool: string, args: unknown, call?: { id: string | null }): Answer {
      const callId = call?.id ?? `replay-call-${++anonymous}`;
      const candidates = recordedNames(session.agent, tool, rebase(args, workspace, recordedCwd));
      let answer: Answer | undefined;
      for (const candidate of candidates) {
        const tried = circuit.answer(candidate.name, candidate.input);
        if (tried.kind === 'hit') {
          if (!elider) return tried;
          elider.call(callId, candidate.name, candidate.input);
          return { ...tried, result: show(callId, candidate.name, tried.result) };
        }
        answer ??= tried;
      }
      const miss: Answer = answer ?? { kind: 'miss', nearest: [] };
      // A miss is an error result to the model: it ends the baseline of what it asked for.
      const first = candidates[0];
      if (elider && first) {
        elider.call(callId, first.name, first.input);
        show(callId, first.name, { type: 'tool_result', callId, output: '', isError: true });
      }
      if (miss.kind === 'miss') {
        run.runs.saveMiss(run.runId, {
          sessionId: session.id,
          turn: steps,
          call: { name: tool, input: args },
          nearest: miss.nearest,
          policy: run.onMiss,
        });
        if (run.onMiss === 'stop')
          stopped ??= `replay-history: stopped (--on-miss stop): ${tool} ${JSON.stringify(args)} is not in the recording`;
      }
      return miss;
    },
  };

  const onExchange = (exchange: Exchange): void => {
    // opencode compacted: its model no longer sees any earlier result, so none may be pointed at.
    if (exchange.kind === 'summary' && !exchange.error) elider?.reset();
    if (exchange.kind !== 'step' || exchange.refused) return;
    // opencode clears old outputs on its own ("pruning"): an output no longer shown ends its baseline.
    if (elider) {
      for (const message of exchange.request.messages) {
        if (message.role === 'tool' && clearedOutputs.has(message.content))
          elider.forgetCall(message.tool_call_id);
      }
    }
    if (exchange.error !== undefined || !exchange.message) {
      if (!(run.upstream.kind === 'recorded' && exchange.error?.includes(exhaustedMessage)))
        lastError = exchange.error ?? 'no answer';
      return;
    }
    lastError = undefined;
    steps++;
    const turn = steps;
    const at = recordedFor(inPrompt++);
    const original = at === undefined ? null : (originals[at] ?? null);
    const made = (exchange.message.tool_calls ?? []).map((call) =>
      asRecorded(session.agent, call, workspace, recordedCwd),
    );
    // Calls asking again for what the model was shown as a marker (before they are answered).
    const reasked = elider
      ? made.filter((call) => {
          try {
            return elider.elided(callKey(call.function.name, JSON.parse(call.function.arguments)));
          } catch {
            return false;
          }
        }).length
      : 0;
    const match = compareCalls(made, original?.tool_calls ?? [], matching(session));
    const pair = pairFromExchange(exchange, {
      run: run.runId,
      session: session.id,
      agent: session.agent,
      turn,
      model: run.model,
    });
    pair.original = original;
    pair.match = { tool_calls: match.match };
    recordStep(run, pair, match, { ...totals, reasks: reasked });
  };

  let recorded: RecordedModel | undefined;
  let proxy: RecordingProxy | undefined;
  let answers: AnswerServer | undefined;
  let environment: ReturnType<typeof prepareEnvironment> | undefined;
  let server: OpencodeServer | undefined;
  // This session's servers answer only requests carrying this secret (loopback.ts): opencode's provider key
  // for the proxy, the plugin's key for the answer server, the proxy's key for the recorded model.
  const secret = newSecret();
  // The private tree first: the servers that can listen on a Unix socket do so inside it (0700).
  const root = makePrivateTree();
  const socketIn = (name: string): string | undefined => {
    const path = join(root, name);
    return socketFits(path) ? path : undefined;
  };
  try {
    let upstream: string;
    let modelId: string;
    let apiKey: string | undefined;
    if (run.upstream.kind === 'recorded') {
      const summaries = session.messages.filter((message) => message.compaction).map(textOf);
      const socket = socketIn('model.sock');
      recorded = await startRecordedModel({
        secret,
        ...(socket ? { socket } : {}),
        // The current prompt's recorded turns, in order; none left: the recording is exhausted.
        next: () => {
          const at = recordedFor(served);
          const turn = at === undefined ? undefined : recordedTurns[at];
          if (!turn) return undefined;
          served++;
          return {
            message: asOpencode(session.agent, originals[at as number] as Assistant),
            usage: {
              prompt_tokens: turn.response.usage?.inputTokens ?? 0,
              completion_tokens: turn.response.usage?.outputTokens ?? 0,
            },
          };
        },
        ...(session.title ? { title: session.title } : {}),
        summaries,
      });
      upstream = recorded.url;
      modelId = 'recorded';
      // The recorded model is ours: the proxy presents the secret to it as the key.
      apiKey = secret;
    } else {
      upstream = run.upstream.baseURL;
      modelId = run.upstream.model;
      apiKey = run.upstream.apiKey;
    }
    // On a socket too: the plugin hands opencode's provider a fetch that connects there (plugin.ts).
    const proxySocket = socketIn('proxy.sock');
    proxy = await startRecordingProxy({
      secret,
      ...(proxySocket ? { socket: proxySocket } : {}),
      upstream,
      ...(recorded?.socket ? { upstreamSocket: recorded.socket } : {}),
      ...(apiKey ? { apiKey } : {}),
      timeoutMs: run.timeoutMs,
      onExchange,
      refuse: (kind) => {
        if (kind !== 'step') return undefined;
        if (stopped) return stopped;
        if (steps >= budget)
          return `replay-history: the session's budget of ${budget} model calls (--max-turns) is spent`;
        return undefined;
      },
    });
    // The recorded title and metadata go back too: opencode's record of the call looks as it did.
    const answersSocket = socketIn('answers.sock');
    answers = await startAnswerServer(source, {
      secret,
      ...(answersSocket ? { socket: answersSocket } : {}),
      details: (result) => result.display ?? {},
    });
    environment = prepareEnvironment({
      root,
      workspace,
      baseURL: proxy.url,
      model: modelId,
      apiKey: secret,
      ...(proxy.socket ? { modelSocket: proxy.socket } : {}),
      answers: {
        url: answers.url,
        ...(answers.socket ? { socket: answers.socket } : {}),
        secret,
      },
      parentPid: process.pid,
      ...(run.limit ? { limit: run.limit } : {}),
      // The plugin says it is loaded: nothing is prompted before it has (below).
      plugin: { ...(run.tools ? { tools: run.tools } : {}), announce: true },
    });

    // One opencode for the whole session: a server (server.ts) that takes every prompt, as `opencode run` would
    // one at a time. It runs under the watchdog: should this process die without cleaning up, opencode goes too.
    const watchdog = join(root, 'watch.sh');
    writeFileSync(watchdog, watchdogScript(), { mode: 0o700 });
    const watched = [
      watchdog,
      String(process.pid),
      run.binary,
      'serve',
      '--hostname',
      '127.0.0.1',
      '--port',
      '0',
    ];
    const argv = confined(watched, run, { sessionId: session.id, workspace, root: environment.root });
    // opencode's own basic auth on its API (which could run a shell): a password of this session's, held here.
    const password = newSecret();
    const fail = (why: string): void => {
      // opencode's output is printed and stored: the secrets are taken out (it may echo a request).
      failTurn(
        run,
        session.id,
        steps + 1,
        originals[steps]?.tool_calls?.length ?? 0,
        redact(redact(why, secret), password),
      );
      status = 'failed';
    };
    try {
      server = await OpencodeServer.start({
        argv,
        cwd: workspace,
        env: environment.env,
        directory: workspace,
        password,
        // Start-up is seconds (about 5 on a quiet machine, 11 on one loaded 7-fold); a wedged one is not waited for.
        startTimeoutMs: Math.min(processTimeout, 180_000),
      });
      // The guard proved live before anything is replayed: the plugin says it is loaded, from inside this
      // opencode (its PID is the server's or a descendant's). Without that word, nothing is prompted.
      const pid = await answers.live(Math.min(processTimeout, 30_000));
      if (pid === undefined || !(pid === server.pid || descendants(server.pid).includes(pid))) {
        const tail = server.stderrTail();
        fail(
          `opencode did not load the replay plugin (${pid === undefined ? 'no word from it' : `its word came from process ${pid}, not this opencode`}): nothing was replayed${tail ? `\n${tail}` : ''}`,
        );
        await server.close();
        server = undefined;
      }
    } catch (error) {
      if (!(error instanceof ServerStartError)) throw error;
      fail(error.message);
    }

    let opencodeSession: string | undefined;
    for (const [index, prompt] of server ? prompts.entries() : []) {
      current = prompt;
      inPrompt = 0;
      served = 0;
      const refusedBefore = recorded?.exhausted() ?? 0;
      const outcome = await (server as OpencodeServer).prompt({
        ...(opencodeSession ? { sessionID: opencodeSession } : {}),
        // The recorded title: opencode then has no title to ask the model for (a call the user would pay for).
        ...(session.title ? { title: session.title } : {}),
        text: prompt.text,
        files: attach(environment.root, index, prompt.images ?? []),
        model: { providerID: 'replay', modelID: modelId },
        timeoutMs: processTimeout,
      });
      // Its last answer may still be on the wire; wait until the proxy is done.
      await proxy.idle();
      opencodeSession ??= outcome.sessionID;
      if (proxy.handlerErrors.length > 0) throw proxy.handlerErrors[0];
      if (stopped) {
        status = 'diverged';
        break;
      }
      if (steps >= budget && index < prompts.length - 1) {
        run.onNote?.(`${session.id.slice(0, 12)}: stopped at the budget of ${budget} model calls`);
        break;
      }
      const failed =
        outcome.failure !== undefined ||
        outcome.errors.length > 0 ||
        lastError !== undefined ||
        !opencodeSession;
      // `--model recorded` ran out of this prompt's turns: opencode stops with an error, the prompt is over.
      const ranOut =
        recorded !== undefined &&
        recorded.exhausted() > refusedBefore &&
        lastError === undefined &&
        outcome.failure === undefined;
      if (failed && !ranOut) {
        const said = outcome.errors.map((error) => JSON.stringify(error)).join('; ');
        const tail = (server as OpencodeServer).stderrTail();
        const failure = outcome.failure;
        fail(
          lastError ??
            (failure?.kind === 'exited'
              ? failure.code === orphanExitCode
                ? 'opencode stopped: the replay process was gone'
                : `opencode exited with ${failure.code ?? failure.signal}${tail ? `\n${tail}` : ''}`
              : failure?.kind === 'timeout'
                ? `opencode did not finish within ${Math.round(processTimeout / 1000)} s`
                : failure?.kind === 'api'
                  ? `opencode refused the prompt: ${failure.detail}`
                  : `opencode failed${said ? `: ${said}` : ''}${tail ? `\n${tail}` : ''}`),
        );
        break;
      }
    }
    run.runs.setSessionStatus(run.runId, session.id, status);
    run.onSession?.({ sessionId: session.id, status });
  } finally {
    // opencode first, by its PID (and its descendants'): nothing of it outlives the session.
    await server?.close();
    await proxy?.close();
    await answers?.close();
    await recorded?.close();
    // The whole private tree, sockets included (the environment's cleanup is the same, and may not exist yet).
    rmSync(root, { recursive: true, force: true });
  }
}

const extensions: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** Writes a prompt's images into the private tree (never the workspace), for `opencode run --file`. */
function attach(
  root: string,
  prompt: number,
  images: readonly { mediaType: string; data: string }[],
): string[] {
  if (images.length === 0) return [];
  const dir = join(root, 'attachments');
  mkdirSync(dir, { recursive: true });
  return images.map((image, index) => {
    const path = join(dir, `prompt-${prompt + 1}-${index + 1}.${extensions[image.mediaType] ?? 'bin'}`);
    writeFileSync(path, Buffer.from(image.data, 'base64'));
    return path;
  });
}
