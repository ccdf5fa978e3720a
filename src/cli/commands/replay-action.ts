// What `replay` does, loaded only when it runs: the drivers, the engine and the checker take a good part of a
// second to load, which `replay --help` and every other command should not pay.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { ClaudeNotFound, findClaude } from '../../drivers/claude-code/binary.js';
import { type ClaudeModel, replayClaudeCode } from '../../drivers/claude-code/driver.js';
import { claudeCodeVersion } from '../../drivers/claude-code/environment.js';
import { findOpencode, OpencodeNotFound } from '../../drivers/opencode/binary.js';
import { replayOpencode, type Upstream } from '../../drivers/opencode/driver.js';
import { opencodeVersion } from '../../drivers/opencode/environment.js';
import { builtinTools } from '../../drivers/opencode/plugin.js';
import { offeredTools, ProbeError } from '../../drivers/opencode/probe.js';
import { callKeys } from '../../replay/chat.js';
import type { ShownSettings } from '../../replay/elide.js';
import { replayForced, requestDigest, type SessionEnd } from '../../replay/engine.js';
import { replayFree } from '../../replay/free.js';
import { type Pair, PairsFileError, PairsWriter } from '../../replay/pairs.js';
import { ProviderSpecError, parseSpec, providerFor } from '../../replay/providers/index.js';
import { ProviderError } from '../../replay/providers/types.js';
import type { Db } from '../../store/db.js';
import { type Driver, keySession, type Match, RunStore, turnKey } from '../../store/runs.js';
import { SessionStore } from '../../store/sessions.js';
import { probeSandbox, SandboxUnavailable } from '../../verify/sandbox.js';
import { ExitCode, UserError } from '../errors.js';
import { collectGarbage } from '../memory.js';
import { err, progressBar, say, warn, writeOut } from '../output.js';
import type { ReplayOptions } from './replay.js';
import { checkJson, finishCheck, formatCheck, startCheck } from './replay-check.js';
import { formatFigures, runJson } from './runs.js';
import { resolveTargets } from './targets.js';

/** What a run needs to be resumed exactly as it was started. */
interface StoredOptions {
  model: string;
  baseUrl?: string;
  mode: 'forced' | 'free';
  onMiss: 'error' | 'stop';
  maxTurns: number;
  concurrency: number;
  systemPrompt?: string;
  timeout: number;
  retries: number;
  stream: boolean;
  maxTokens?: number;
  /** Absolute; missing in runs stored before the checker existed. */
  watch?: string[];
  exclude?: string[];
  shown?: ShownSettings;
  /** Missing in runs stored before the opencode driver: builtin. */
  driver?: Driver;
  contextLimit?: number;
  opencodeBin?: string;
  claudeBin?: string;
  /** Absolute. */
  workspace?: string;
  sandbox?: boolean;
}

/** Signals that stop a replay the way Ctrl-C does. */
const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Turns between two full garbage collections during a replay. */
const gcEvery = 256;

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  return `run_${stamp}_${randomBytes(3).toString('hex')}`;
}

export async function replay(
  db: Db,
  targets: string[],
  options: ReplayOptions,
  modeGiven = false,
): Promise<number> {
  const runs = new RunStore(db);
  const sessions = new SessionStore(db);
  let runId: string;
  let stored: StoredOptions;
  let sessionIds: string[];
  let outFile: string;
  let mode: 'new' | 'append' | 'resume';

  if (options.resume) {
    const run = runs.resolve(options.resume);
    runId = run.id;
    stored = JSON.parse(run.options) as StoredOptions;
    sessionIds = runs.sessions(run.id);
    outFile = run.out_file;
    mode = 'resume';
  } else {
    runId = newRunId();
    stored = {
      model: options.model,
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      mode: options.mode,
      onMiss: options.onMiss,
      maxTurns: options.maxTurns,
      concurrency: options.concurrency,
      ...(options.systemPrompt ? { systemPrompt: resolve(options.systemPrompt) } : {}),
      timeout: options.timeout,
      retries: options.retries,
      stream: options.stream === true,
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      watch: options.watch.map((dir) => resolve(dir)),
      exclude: options.exclude.map((path) => resolve(path)),
      ...(options.agent === 'opencode'
        ? {
            driver: 'opencode' as const,
            ...(options.opencodeBin ? { opencodeBin: resolve(options.opencodeBin) } : {}),
            ...(options.workspace ? { workspace: resolve(options.workspace) } : {}),
            ...(options.sandbox ? { sandbox: true } : {}),
            ...(options.contextLimit ? { contextLimit: options.contextLimit } : {}),
          }
        : {}),
      ...(options.agent === 'claude-code'
        ? {
            driver: 'claude-code' as const,
            ...(options.claudeBin ? { claudeBin: resolve(options.claudeBin) } : {}),
            ...(options.sandbox ? { sandbox: true } : {}),
            ...(options.workspace ? { workspace: resolve(options.workspace) } : {}),
          }
        : {}),
      ...(options.elideRepeats || options.maxResultBytes !== undefined
        ? {
            shown: {
              elideRepeats: options.elideRepeats === true,
              extraTools: options.elideTool,
              ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
            },
          }
        : {}),
    };
    if (options.elideTool.length > 0 && !options.elideRepeats)
      throw new UserError('--elide-tool only makes sense with --elide-repeats');
    if (options.agent === 'opencode') {
      checkAgentOptions(options, modeGiven, 'opencode');
      stored.mode = 'free';
    } else if (options.agent === 'claude-code') {
      checkAgentOptions(options, modeGiven, 'Claude Code');
      stored.mode = 'free';
    }
    // Each driver's own options, refused with any other.
    for (const [given, name, agents] of [
      [options.opencodeBin, '--opencode-bin', ['opencode']],
      [options.workspace, '--workspace', ['opencode', 'claude-code']],
      [options.sandbox, '--sandbox', ['opencode', 'claude-code']],
      [options.contextLimit, '--context-limit', ['opencode']],
      [options.claudeBin, '--claude-bin', ['claude-code']],
    ] as const) {
      if (given && !(agents as readonly string[]).includes(options.agent))
        throw new UserError(
          `${name} only applies with ${agents.map((agent) => `--agent ${agent}`).join(' or ')}`,
        );
    }
    for (const dir of stored.watch ?? []) {
      if (!existsSync(dir) || !statSync(dir).isDirectory())
        throw new UserError(`--watch ${dir}: no such directory`, 'name a directory that exists');
    }
    sessionIds = resolveTargets(db, targets, options.all === true, undefined, {
      branches: options.branches === true,
    });
    outFile = resolve(options.out);
    const holds = existsSync(outFile) && statSync(outFile).size > 0;
    if (holds && options.force) truncateSync(outFile, 0);
    mode = holds && options.append ? 'append' : 'new';
  }

  const driver = stored.driver ?? 'builtin';
  // Everything that can be wrong with the opencode driver's setup is found before the run is created.
  const opencode = driver === 'opencode' ? await prepareOpencode(stored) : undefined;
  const claude = driver === 'claude-code' ? prepareClaude(stored) : undefined;

  let systemPrompt: string | undefined;
  if (stored.systemPrompt) {
    try {
      systemPrompt = readFileSync(stored.systemPrompt, 'utf8');
    } catch (error) {
      throw new UserError(
        `cannot read the system prompt ${stored.systemPrompt}: ${(error as Error).message}`,
      );
    }
  }
  // The opencode driver reaches the model through opencode (upstreamFor): no provider of ours is built for it.
  let provider: Awaited<ReturnType<typeof providerFor>> | undefined;
  try {
    if (!opencode && !claude)
      provider = await providerFor({
        spec: stored.model,
        ...(stored.baseUrl ? { baseURL: stored.baseUrl } : {}),
        timeoutMs: stored.timeout * 1000,
        maxRetries: stored.retries,
        stream: stored.stream,
        ...(stored.maxTokens ? { maxTokens: stored.maxTokens } : {}),
      });
  } catch (error) {
    if (error instanceof ProviderSpecError) throw new UserError(error.message);
    throw error;
  }

  let opened: ReturnType<typeof PairsWriter.open>;
  const existing = new Map<string, { turn: number; completion: Pair['completion'] }[]>();
  try {
    const recorded = runs.doneTurns(runId);
    opened = PairsWriter.open(outFile, mode, runId, (pair) => {
      reconcile(runs, recorded, pair);
      // Free mode goes on from the answers already given; only they are kept, not the whole contexts.
      if (stored.mode === 'free') {
        const list = existing.get(pair.session) ?? [];
        list.push({ turn: pair.turn, completion: pair.completion });
        existing.set(pair.session, list);
      }
    });
  } catch (error) {
    if (error instanceof PairsFileError && mode === 'new') {
      throw new UserError(
        `${error.message}`,
        'pass --append to add to it, --force to overwrite it, or another --out',
      );
    }
    if (error instanceof PairsFileError) throw new UserError(error.message);
    throw error;
  }
  if (opened.cut > 0)
    warn(`${outFile}: removed a torn last line (${opened.cut} bytes) left by an interrupted run`);
  if (mode === 'resume' && driver !== 'builtin') {
    // A real agent cannot go on from the middle of a session: one the killed run had begun but not finished is
    // replayed again from its start, in a new opencode session, and its earlier pairs and turns are replaced.
    const begun = new Set(
      [...runs.doneTurns(runId), ...opened.done]
        .map(keySession)
        .filter((id) => ['pending', 'failed'].includes(runs.sessionStatus(runId, id) ?? 'pending')),
    );
    if (begun.size > 0) {
      opened.writer.close();
      const replaced = PairsWriter.supersede(outFile, runId, begun);
      for (const id of begun) {
        runs.restartSession(runId, id);
        warn(
          `${id.slice(0, 12)}: begun by the interrupted run; ${driver} cannot continue a session mid-way, so it is replayed again from its start`,
        );
      }
      if (replaced > 0) warn(`${replaced} earlier pair(s) of those sessions taken out of ${outFile}`);
      opened = PairsWriter.open(outFile, 'resume', runId);
    }
  }
  if (mode === 'resume') runs.reopen(runId);
  else
    runs.create(
      { id: runId, model: stored.model, mode: stored.mode, driver, options: stored, outFile },
      sessionIds,
    );
  const done = new Set([...runs.doneTurns(runId), ...opened.done]);

  const check = await startCheck({
    runId,
    dbFile: options.db,
    outFile,
    cwds: stored.workspace ? [stored.workspace] : sessionIds.map((id) => sessions.row(id)?.cwd ?? null),
    watch: stored.watch ?? [],
    exclude: stored.exclude ?? [],
    // A real agent runs against a copy-on-write view of the checked directories where one can be made.
    ...(opencode || claude ? { agent: { sandbox: stored.sandbox === true } } : {}),
  });
  const bar = progressBar('replay');
  let asked = 0;
  const total = sessionIds.reduce((n, id) => n + (sessions.row(id)?.turn_count ?? 0), 0) - done.size;
  // Ctrl-C, `kill`, a closed terminal: the run is marked interrupted (never left 'running') and can be resumed.
  // Exit 128 + the signal's number, as a shell reports a process killed by it.
  const interrupted = (signal: NodeJS.Signals) => {
    runs.finish(runId, 'interrupted', `stopped by ${signal}`);
    bar.end();
    check.checker?.abandon();
    say(`\ninterrupted (${signal}); continue with: replay-history replay --resume ${runId}`);
    process.exit(128 + (constants.signals[signal] ?? 2));
  };
  for (const signal of stopSignals) process.once(signal, interrupted);
  let failure: unknown;
  try {
    // Progress: on a terminal the bar (turns, sessions finished, the session last heard of); elsewhere a line per
    // finished session, so a log shows a long run moving (--quiet: neither).
    let finished = 0;
    const onTurn = (event: { sessionId: string }) => {
      asked++;
      if (!options.quiet)
        bar.update(
          asked,
          Math.max(total, asked),
          `turns · ${finished}/${sessionIds.length} sessions · ${event.sessionId.slice(0, 8)}`,
        );
      // As in ingest: V8 lets garbage pile up with the allocation rate; a full collection every few hundred
      // turns keeps peak memory from growing with the length of the run.
      if (asked % gcEvery === 0) collectGarbage();
    };
    const onSession = (end: SessionEnd) => {
      finished++;
      if (options.quiet || bar.enabled) return;
      const turns = runs.turnCounts(runId, end.sessionId);
      say(
        `${err.dim('session')} ${finished}/${sessionIds.length} ${end.sessionId.slice(0, 8)} ${end.status}: ${turns.done} turn(s)` +
          `${turns.failed > 0 ? `, ${turns.failed} failed` : ''}${end.note ? ` (${end.note})` : ''}`,
      );
    };
    // What every real-agent driver takes, whatever the agent.
    const agentRun = {
      runId,
      model: stored.model,
      sessions,
      runs,
      sessionIds,
      writer: opened.writer,
      concurrency: stored.concurrency,
      onMiss: stored.onMiss ?? 'error',
      maxTurnsFactor: stored.maxTurns ?? 2,
      ...(stored.workspace ? { workspace: stored.workspace } : {}),
      timeoutMs: stored.timeout * 1000,
      onTurn,
      onSession,
      onNote: (text: string) => warn(text),
    } as const;
    if (claude) {
      await replayClaudeCode({
        ...agentRun,
        upstream: claude.upstream,
        binary: claude.binary,
        ...(stored.shown ? { shown: stored.shown } : {}),
        ...(stored.sandbox ? { sandbox: { readOnly: check.roots } } : {}),
        ...(check.view ? { view: check.view } : {}),
      });
    } else if (opencode) {
      await replayOpencode({
        ...agentRun,
        upstream: opencode.upstream,
        binary: opencode.binary,
        tools: opencode.tools,
        ...(stored.shown ? { shown: stored.shown } : {}),
        ...(stored.contextLimit
          ? { limit: { context: stored.contextLimit, output: stored.maxTokens ?? 4096 } }
          : {}),
        ...(stored.sandbox ? { sandbox: { readOnly: check.roots } } : {}),
        ...(check.view ? { view: check.view } : {}),
      });
    } else if (provider) {
      const common = {
        runId,
        model: stored.model,
        provider,
        sessions,
        runs,
        sessionIds,
        writer: opened.writer,
        concurrency: stored.concurrency,
        ...(systemPrompt !== undefined ? { systemPrompt } : {}),
        ...(stored.shown ? { shown: stored.shown } : {}),
        onTurn,
        onSession,
      };
      if (stored.mode === 'free') {
        for (const list of existing.values()) list.sort((a, b) => a.turn - b.turn);
        await replayFree({
          ...common,
          existing,
          onMiss: stored.onMiss ?? 'error',
          maxTurnsFactor: stored.maxTurns ?? 2,
        });
      } else await replayForced({ ...common, done });
    }
    // A run none of whose turns was answered did not do its job, whatever the reason: it is a failed run.
    const counts = runs.turnCounts(runId);
    if (counts.done === 0 && counts.failed > 0) runs.finish(runId, 'failed', 'every turn failed');
    else runs.finish(runId, 'done');
  } catch (error) {
    runs.finish(runId, 'failed', (error as Error).message);
    failure = error;
  } finally {
    for (const signal of stopSignals) process.off(signal, interrupted);
    bar.end();
    opened.writer.close();
  }
  // The check is finished and stored whatever became of the run: side effects matter most when it failed.
  const report = await finishCheck(check, runs, runId);
  const sideEffects = report !== undefined && report.changes.length > 0;
  if (failure !== undefined) {
    if (report && !options.json) say(formatCheck(check, report));
    if (failure instanceof ProviderError) {
      throw new UserError(
        failure.message,
        `nothing more was asked; fix it and continue with --resume ${runId}`,
        sideEffects ? ExitCode.sideEffects : ExitCode.failure,
      );
    }
    throw failure;
  }

  const figures = runs.figures(runId);
  const run = runs.get(runId);
  if (run && options.json) {
    writeOut(JSON.stringify({ ...runJson(run, figures), sideEffects: checkJson(check, report) }, null, 2));
  } else if (run) {
    writeOut(formatFigures(run, figures));
    writeOut(formatCheck(check, report));
    say(`${err.dim('pairs:')} ${outFile}`);
  }
  if (sideEffects) return ExitCode.sideEffects;
  return figures.turnsFailed > 0 ? ExitCode.failure : ExitCode.ok;
}

/** A pair already in the file whose turn the store missed (killed between the two writes): record it. */
function reconcile(runs: RunStore, recorded: ReadonlySet<string>, pair: Pair): void {
  if (recorded.has(turnKey(pair.session, pair.turn))) return;
  const predicted = callKeys(pair.completion);
  const original = pair.original ? callKeys(pair.original) : [];
  const left = [...original];
  let matched = 0;
  for (const key of predicted) {
    const at = left.indexOf(key);
    if (at !== -1) {
      matched++;
      left.splice(at, 1);
    }
  }
  runs.saveTurn(pair.run, {
    sessionId: pair.session,
    turn: pair.turn,
    status: 'ok',
    requestDigest: requestDigest(pair.model, pair.messages, pair.tools),
    response: pair.completion,
    match: pair.match.tool_calls as Match,
    callsPredicted: predicted.length,
    callsOriginal: original.length,
    callsMatched: matched,
    promptTokens: pair.usage.prompt_tokens,
    completionTokens: pair.usage.completion_tokens,
    latencyMs: pair.latency_ms,
  });
}

/** The claude binary (its version said) and where its model calls go, before the run is created. */
function prepareClaude(stored: StoredOptions): { binary: string; upstream: ClaudeModel } {
  if (stored.sandbox) requireSandbox();
  let found: ReturnType<typeof findClaude>;
  try {
    found = findClaude(stored.claudeBin);
  } catch (error) {
    if (error instanceof ClaudeNotFound)
      throw new UserError(
        error.message,
        `pass --claude-bin PATH, or npm i -g @anthropic-ai/claude-code@${claudeCodeVersion}`,
      );
    throw error;
  }
  say(`${err.dim('claude:')} ${found.version ?? '(unknown version)'} at ${found.path}`);
  if (found.version !== claudeCodeVersion)
    warn(
      `claude ${found.version ?? '(unknown version)'} at ${found.path}: replay-history is tested with ${claudeCodeVersion}`,
    );
  const { kind, model } = specOf(stored.model);
  if (kind === 'recorded') return { binary: found.path, upstream: { kind: 'recorded' } };
  if (kind === 'anthropic') {
    const apiKey = process.env.ANTHROPIC_API_KEY;
    return {
      binary: found.path,
      upstream: {
        kind: 'http',
        baseURL: stored.baseUrl ?? process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com',
        model,
        ...(apiKey ? { apiKey } : {}),
      },
    };
  }
  throw new UserError(
    `--agent claude-code speaks the Anthropic Messages wire: --model ${stored.model} is not one`,
    'use recorded, or anthropic:MODEL (with --base-url for any server speaking /v1/messages: vLLM, llama.cpp, ollama)',
  );
}

/** `--sandbox` asked for where bubblewrap cannot run: a usage error, before anything runs. */
function requireSandbox(): void {
  try {
    probeSandbox();
  } catch (error) {
    if (error instanceof SandboxUnavailable) throw new UserError(error.message, error.hint);
    throw error;
  }
}

/** `--model` split into its provider and model, a malformed one a usage error. */
function specOf(spec: string): { kind: string; model: string } {
  try {
    return parseSpec(spec);
  } catch (error) {
    if (error instanceof ProviderSpecError) throw new UserError(error.message);
    throw error;
  }
}

/** What no real-agent driver can take, found before anything runs (`who`: the agent, as said to the user). */
function checkAgentOptions(options: ReplayOptions, modeGiven: boolean, who: string): void {
  if (modeGiven && options.mode === 'forced')
    throw new UserError(`--agent ${options.agent} replays in free mode: ${who} drives each session itself`);
  if (options.systemPrompt !== undefined)
    throw new UserError(
      `--system-prompt does not apply with --agent ${options.agent}: ${who} writes its own system prompt`,
    );
  if (options.workspace) {
    const dir = resolve(options.workspace);
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UserError(`--workspace ${dir}: no such directory`);
  }
}

/** The binary, where its model calls go, and a sandbox check: all before the run is created. */
async function prepareOpencode(
  stored: StoredOptions,
): Promise<{ binary: string; upstream: Upstream; tools: string[] }> {
  let binary: string;
  let version: string | undefined;
  try {
    const found = findOpencode(stored.opencodeBin);
    binary = found.path;
    version = found.version;
    if (found.version !== opencodeVersion)
      warn(
        `opencode ${found.version ?? '(unknown version)'} at ${found.path}: replay-history is tested with ${opencodeVersion}; its tools are found by asking it`,
      );
  } catch (error) {
    if (error instanceof OpencodeNotFound)
      throw new UserError(error.message, 'pass --opencode-bin PATH, or npm install opencode-ai');
    throw error;
  }
  if (stored.sandbox) requireSandbox();
  const upstream = upstreamFor(stored);
  // Overridden: every tool this opencode offers this model (asked, not assumed), and on the version the plugin
  // was verified with, the built-ins it filters by model or permission too, so none can appear unanswered.
  let offered: Awaited<ReturnType<typeof offeredTools>>;
  try {
    offered = await offeredTools({
      binary,
      model: upstream.kind === 'recorded' ? 'recorded' : upstream.model,
    });
  } catch (error) {
    if (error instanceof ProbeError)
      throw new UserError(`cannot find the tools opencode offers: ${error.message}`, 'check --opencode-bin');
    throw error;
  }
  if (!offered.cached) say(`${err.dim('opencode offers:')} ${offered.tools.join(', ')}`);
  const tools = [...new Set([...offered.tools, ...(version === opencodeVersion ? builtinTools : [])])];
  return { binary, upstream, tools };
}

/** `--model` for the opencode driver: the recorded turns, or an OpenAI-compatible endpoint. */
function upstreamFor(stored: StoredOptions, env: NodeJS.ProcessEnv = process.env): Upstream {
  const { kind, model } = specOf(stored.model);
  if (kind === 'recorded') return { kind: 'recorded' };
  if (kind === 'openai') {
    const apiKey = env.OPENAI_API_KEY;
    return {
      kind: 'http',
      baseURL: stored.baseUrl ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      model,
      ...(apiKey ? { apiKey } : {}),
    };
  }
  if (kind === 'ollama')
    return { kind: 'http', baseURL: stored.baseUrl ?? 'http://127.0.0.1:11434/v1', model };
  throw new UserError(
    `--agent opencode reaches the model through an OpenAI-compatible proxy: --model ${stored.model} is not one`,
    'use recorded, openai:MODEL (with --base-url for any compatible server) or ollama:MODEL',
  );
}
