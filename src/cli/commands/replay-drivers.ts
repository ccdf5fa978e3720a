// The drivers `replay` can run a session through, as one table: the builtin loop (our own requests to a
// provider) and each real agent (its own binary, prompt and tools). An entry says which options it takes,
// what of them a run stores to be resumed, and how it is prepared — everything that can be wrong with its
// setup is found there, before the run is created — and prepared, how it replays the run's sessions.
// replay-action.ts does the rest the same way for all of them: the run, the pairs file, the checker, progress.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ClaudeNotFound, findClaude } from '../../drivers/claude-code/binary.js';
import { type ClaudeModel, replayClaudeCode } from '../../drivers/claude-code/driver.js';
import { claudeCodeVersion } from '../../drivers/claude-code/environment.js';
import { CodexNotFound, findCodex } from '../../drivers/codex/binary.js';
import { type CodexModel, replayCodex } from '../../drivers/codex/driver.js';
import { codexVersion } from '../../drivers/codex/environment.js';
import { HookNotLive, proveHookLive } from '../../drivers/codex/probe.js';
import { findGemini, GeminiNotFound } from '../../drivers/gemini/binary.js';
import { type GeminiModel, replayGemini } from '../../drivers/gemini/driver.js';
import { geminiVersion } from '../../drivers/gemini/environment.js';
import {
  HookNotLive as GeminiHookNotLive,
  proveHookLive as proveGeminiHookLive,
} from '../../drivers/gemini/probe.js';
import { findOpencode, OpencodeNotFound } from '../../drivers/opencode/binary.js';
import { replayOpencode, type Upstream } from '../../drivers/opencode/driver.js';
import { opencodeVersion } from '../../drivers/opencode/environment.js';
import { builtinTools } from '../../drivers/opencode/plugin.js';
import { offeredTools, ProbeError } from '../../drivers/opencode/probe.js';
import { findQwen, QwenNotFound } from '../../drivers/qwen/binary.js';
import { type QwenModel, replayQwen } from '../../drivers/qwen/driver.js';
import { qwenVersion } from '../../drivers/qwen/environment.js';
import {
  proveHookLive as proveQwenHookLive,
  HookNotLive as QwenHookNotLive,
} from '../../drivers/qwen/probe.js';
import type { ShownSettings } from '../../replay/elide.js';
import { replayForced, type SessionEnd } from '../../replay/engine.js';
import { replayFree } from '../../replay/free.js';
import type { Pair, PairsWriter } from '../../replay/pairs.js';
import { ProviderSpecError, parseSpec, providerFor } from '../../replay/providers/index.js';
import type { Driver, RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { probeSandbox, SandboxUnavailable } from '../../verify/sandbox.js';
import { UserError } from '../errors.js';
import { err, say, warn } from '../output.js';
import type { ReplayOptions } from './replay.js';

/** What a run needs to be resumed exactly as it was started. */
export interface StoredOptions {
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
  codexBin?: string;
  qwenBin?: string;
  geminiBin?: string;
  /** Absolute. */
  workspace?: string;
  sandbox?: boolean;
}

/** What a prepared driver is handed: the run, where its pairs go, and the run's state so far. */
export interface DriverRun {
  runId: string;
  stored: StoredOptions;
  sessions: SessionStore;
  runs: RunStore;
  sessionIds: readonly string[];
  writer: PairsWriter;
  /** Turns already done (`--resume`), by turnKey. */
  done: ReadonlySet<string>;
  /** Free mode: the answers already given per session, in turn order (`--resume` goes on from them). */
  existing: Map<string, { turn: number; completion: Pair['completion'] }[]>;
  /** The checked roots (what `--sandbox` makes read-only) and the copy-on-write view, where one was made. */
  check: { roots: string[]; view?: CopyOnWrite };
  onTurn: (event: { sessionId: string }) => void;
  onSession: (end: SessionEnd) => void;
}

/** The options only some drivers take, as `replay` names them. */
export type DriverOption =
  | '--opencode-bin'
  | '--claude-bin'
  | '--codex-bin'
  | '--qwen-bin'
  | '--gemini-bin'
  | '--workspace'
  | '--sandbox'
  | '--context-limit';

export interface DriverEntry {
  /** A real agent, as said to the user: it drives each session itself (free mode), its own prompt and tools. */
  agent?: string;
  options: readonly DriverOption[];
  /** The driver's own options as a run stores them (paths made absolute). */
  store(options: ReplayOptions): Partial<StoredOptions>;
  /** Finds what is wrong with the setup before the run is created; then replays the run's sessions. */
  prepare(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>>;
}

const agentOptions = (options: ReplayOptions): Partial<StoredOptions> => ({
  ...(options.workspace ? { workspace: resolve(options.workspace) } : {}),
  ...(options.sandbox ? { sandbox: true } : {}),
});

export const drivers: Record<Driver, DriverEntry> = {
  builtin: { options: [], store: () => ({}), prepare: prepareBuiltin },
  opencode: {
    agent: 'opencode',
    options: ['--opencode-bin', '--workspace', '--sandbox', '--context-limit'],
    store: (options) => ({
      driver: 'opencode',
      ...(options.opencodeBin ? { opencodeBin: resolve(options.opencodeBin) } : {}),
      ...agentOptions(options),
      ...(options.contextLimit ? { contextLimit: options.contextLimit } : {}),
    }),
    prepare: prepareOpencode,
  },
  'claude-code': {
    agent: 'Claude Code',
    options: ['--claude-bin', '--workspace', '--sandbox'],
    store: (options) => ({
      driver: 'claude-code',
      ...(options.claudeBin ? { claudeBin: resolve(options.claudeBin) } : {}),
      ...agentOptions(options),
    }),
    prepare: prepareClaude,
  },
  codex: {
    agent: 'Codex',
    options: ['--codex-bin', '--workspace', '--sandbox', '--context-limit'],
    store: (options) => ({
      driver: 'codex',
      ...(options.codexBin ? { codexBin: resolve(options.codexBin) } : {}),
      ...agentOptions(options),
      ...(options.contextLimit ? { contextLimit: options.contextLimit } : {}),
    }),
    prepare: prepareCodex,
  },
  qwen: {
    agent: 'Qwen Code',
    options: ['--qwen-bin', '--workspace', '--sandbox'],
    store: (options) => ({
      driver: 'qwen',
      ...(options.qwenBin ? { qwenBin: resolve(options.qwenBin) } : {}),
      ...agentOptions(options),
    }),
    prepare: prepareQwen,
  },
  gemini: {
    agent: 'Gemini CLI',
    options: ['--gemini-bin', '--workspace', '--sandbox'],
    store: (options) => ({
      driver: 'gemini',
      ...(options.geminiBin ? { geminiBin: resolve(options.geminiBin) } : {}),
      ...agentOptions(options),
    }),
    prepare: prepareGemini,
  },
};

/** What every real-agent driver takes, whatever the agent. */
function agentRun(run: DriverRun) {
  const { stored } = run;
  return {
    runId: run.runId,
    model: stored.model,
    sessions: run.sessions,
    runs: run.runs,
    sessionIds: run.sessionIds,
    writer: run.writer,
    concurrency: stored.concurrency,
    onMiss: stored.onMiss ?? 'error',
    maxTurnsFactor: stored.maxTurns ?? 2,
    ...(stored.workspace ? { workspace: stored.workspace } : {}),
    timeoutMs: stored.timeout * 1000,
    ...(stored.shown ? { shown: stored.shown } : {}),
    ...(stored.sandbox ? { sandbox: { readOnly: run.check.roots } } : {}),
    ...(run.check.view ? { view: run.check.view } : {}),
    onTurn: run.onTurn,
    onSession: run.onSession,
    onNote: (text: string) => warn(text),
  };
}

/** Our own loop: the provider `--model` names, asked turn by turn (forced) or driving the session (free). */
async function prepareBuiltin(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
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
  let provider: Awaited<ReturnType<typeof providerFor>>;
  try {
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
  return async (run) => {
    const common = {
      runId: run.runId,
      model: stored.model,
      provider,
      sessions: run.sessions,
      runs: run.runs,
      sessionIds: run.sessionIds,
      writer: run.writer,
      concurrency: stored.concurrency,
      ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      ...(stored.shown ? { shown: stored.shown } : {}),
      onTurn: run.onTurn,
      onSession: run.onSession,
    };
    if (stored.mode === 'free') {
      for (const list of run.existing.values()) list.sort((a, b) => a.turn - b.turn);
      await replayFree({
        ...common,
        existing: run.existing,
        onMiss: stored.onMiss ?? 'error',
        maxTurnsFactor: stored.maxTurns ?? 2,
      });
    } else await replayForced({ ...common, done: new Set(run.done) });
  };
}

/**
 * An agent's binary as its `find` locates it (an option, PATH, the pinned package), its version said on stderr
 * and warned about when it is not the tested one; not found, a usage error saying what to pass or install.
 */
function located<Found extends { path: string; version?: string }>(
  name: string,
  find: () => Found,
  notFound: abstract new (...args: never[]) => Error,
  tested: string,
  hint: string,
): Found {
  let found: Found;
  try {
    found = find();
  } catch (error) {
    if (error instanceof notFound) throw new UserError(error.message, hint);
    throw error;
  }
  say(`${err.dim(`${name}:`)} ${found.version ?? '(unknown version)'} at ${found.path}`);
  if (found.version !== tested)
    warn(
      `${name} ${found.version ?? '(unknown version)'} at ${found.path}: replay-history is tested with ${tested}`,
    );
  return found;
}

/** The claude binary (its version said) and where its model calls go. */
async function prepareClaude(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'claude',
    () => findClaude(stored.claudeBin),
    ClaudeNotFound,
    claudeCodeVersion,
    `pass --claude-bin PATH, or npm i -g @anthropic-ai/claude-code@${claudeCodeVersion}`,
  );
  const upstream = claudeUpstream(stored);
  return (run) => replayClaudeCode({ ...agentRun(run), upstream, binary: found.path });
}

function claudeUpstream(stored: StoredOptions): ClaudeModel {
  const { kind, model } = specOf(stored.model);
  if (kind === 'recorded') return { kind: 'recorded' };
  if (kind === 'anthropic') {
    const apiKey = process.env.ANTHROPIC_API_KEY;
    return {
      kind: 'http',
      baseURL: stored.baseUrl ?? process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com',
      model,
      ...(apiKey ? { apiKey } : {}),
    };
  }
  throw new UserError(
    `--agent claude-code speaks the Anthropic Messages wire: --model ${stored.model} is not one`,
    'use recorded, or anthropic:MODEL (with --base-url for any server speaking /v1/messages: vLLM, llama.cpp, ollama)',
  );
}

/**
 * The codex binary (its version said), where its model calls go, and the proof that its deny hook is live: a
 * probe run that must come back blocked, or the replay refuses before anything of the user's is run.
 */
async function prepareCodex(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'codex',
    () => findCodex(stored.codexBin),
    CodexNotFound,
    codexVersion,
    `pass --codex-bin PATH, or npm i -g @openai/codex@${codexVersion}`,
  );
  const upstream = codexUpstream(stored);
  let models: string[];
  try {
    const probed = await proveHookLive({
      binary: found.path,
      ...(found.version ? { version: found.version } : {}),
    });
    models = probed.models;
    if (!probed.cached) say(`${err.dim('codex:')} its deny hook stops a probe call before it runs`);
  } catch (error) {
    if (error instanceof HookNotLive)
      throw new UserError(
        `refusing to replay through ${found.path}: its PreToolUse deny hook is not live (${error.message}), so recorded tools could run`,
        `replay-history is tested with codex ${codexVersion}; pass --codex-bin for that version`,
      );
    throw error;
  }
  return (run) =>
    replayCodex({
      ...agentRun(run),
      upstream,
      binary: found.path,
      models,
      ...(stored.contextLimit ? { compactAt: stored.contextLimit } : {}),
    });
}

/** `--model` for the Codex driver: the recorded turns, or a Responses-API endpoint. */
function codexUpstream(stored: StoredOptions, env: NodeJS.ProcessEnv = process.env): CodexModel {
  const { kind, model } = specOf(stored.model);
  if (kind === 'recorded') return { kind: 'recorded' };
  if (kind === 'responses') {
    const apiKey = env.OPENAI_API_KEY;
    return {
      kind: 'http',
      baseURL: stored.baseUrl ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      model,
      ...(apiKey ? { apiKey } : {}),
    };
  }
  throw new UserError(
    `--agent codex speaks the OpenAI Responses wire: --model ${stored.model} is not one`,
    'use recorded, or responses:MODEL (with --base-url for any server speaking /v1/responses: OpenAI, vLLM)',
  );
}

/**
 * The qwen binary (its version said), where its model calls go, and the proof that its deny hook is live: a
 * probe run that must come back denied with our reason, or the replay refuses before anything of the user's runs.
 */
async function prepareQwen(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'qwen',
    () => findQwen(stored.qwenBin),
    QwenNotFound,
    qwenVersion,
    `pass --qwen-bin PATH, or npm i -g @qwen-code/qwen-code@${qwenVersion}`,
  );
  const upstream = qwenUpstream(stored);
  try {
    const probed = await proveQwenHookLive({
      binary: found.path,
      ...(found.version ? { version: found.version } : {}),
    });
    if (!probed.cached) say(`${err.dim('qwen:')} its deny hook stops a probe call before it runs`);
  } catch (error) {
    if (error instanceof QwenHookNotLive)
      throw new UserError(
        `refusing to replay through ${found.path}: its PreToolUse deny hook is not live (${error.message}), so recorded tools could run`,
        `replay-history is tested with qwen ${qwenVersion}; pass --qwen-bin for that version`,
      );
    throw error;
  }
  return (run) => replayQwen({ ...agentRun(run), upstream, binary: found.path });
}

/** `--model` for the Qwen driver: the recorded turns, or an OpenAI-compatible chat-completions endpoint. */
function qwenUpstream(stored: StoredOptions, env: NodeJS.ProcessEnv = process.env): QwenModel {
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
    `--agent qwen speaks the OpenAI chat-completions wire: --model ${stored.model} is not one`,
    'use recorded, openai:MODEL (with --base-url for any compatible server: vLLM, llama.cpp, DashScope) or ollama:MODEL',
  );
}

/**
 * The gemini binary (its version said), where its model calls go, and the proof that its deny hook is live: a
 * probe run that must come back blocked with our reason, or the replay refuses before anything of the user's runs.
 */
async function prepareGemini(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'gemini',
    () => findGemini(stored.geminiBin),
    GeminiNotFound,
    geminiVersion,
    `pass --gemini-bin PATH, or npm i -g @google/gemini-cli@${geminiVersion}`,
  );
  const upstream = geminiUpstream(stored);
  try {
    const probed = await proveGeminiHookLive({
      binary: found.path,
      ...(found.version ? { version: found.version } : {}),
    });
    if (!probed.cached) say(`${err.dim('gemini:')} its deny hook stops a probe call before it runs`);
  } catch (error) {
    if (error instanceof GeminiHookNotLive)
      throw new UserError(
        `refusing to replay through ${found.path}: its BeforeTool deny hook is not live (${error.message}), so recorded tools could run`,
        `replay-history is tested with gemini ${geminiVersion}; pass --gemini-bin for that version`,
      );
    throw error;
  }
  return (run) => replayGemini({ ...agentRun(run), upstream, binary: found.path });
}

/** `--model` for the Gemini driver: the recorded turns, or a Gemini API endpoint. */
function geminiUpstream(stored: StoredOptions, env: NodeJS.ProcessEnv = process.env): GeminiModel {
  const { kind, model } = specOf(stored.model);
  if (kind === 'recorded') return { kind: 'recorded' };
  if (kind === 'gemini') {
    const apiKey = env.GEMINI_API_KEY ?? env.GOOGLE_API_KEY;
    return {
      kind: 'http',
      baseURL: stored.baseUrl ?? env.GOOGLE_GEMINI_BASE_URL ?? 'https://generativelanguage.googleapis.com',
      model,
      ...(apiKey ? { apiKey } : {}),
    };
  }
  throw new UserError(
    `--agent gemini speaks the Gemini API wire: --model ${stored.model} is not one`,
    'use recorded, or gemini:MODEL (with --base-url for any server speaking /v1beta/models/MODEL:streamGenerateContent)',
  );
}

/** The binary, where its model calls go, the tools it offers, and a sandbox check. */
async function prepareOpencode(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
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
  const upstream = opencodeUpstream(stored);
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
  return (run) =>
    replayOpencode({
      ...agentRun(run),
      upstream,
      binary,
      tools,
      ...(stored.contextLimit
        ? { limit: { context: stored.contextLimit, output: stored.maxTokens ?? 4096 } }
        : {}),
    });
}

/** `--model` for the opencode driver: the recorded turns, or an OpenAI-compatible endpoint. */
function opencodeUpstream(stored: StoredOptions, env: NodeJS.ProcessEnv = process.env): Upstream {
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
