// How each real agent's driver is prepared for a run: its binary found and its version said, where its model
// calls go (`--model`), its guard's setup checked. replay-drivers.ts loads this file only when a run uses an
// agent, so a builtin replay does not load the agents' drivers.
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
import { ProviderSpecError, parseSpec } from '../../replay/providers/index.js';
import { probeSandbox, SandboxUnavailable } from '../../verify/sandbox.js';
import { UserError } from '../errors.js';
import { err, say, warn } from '../output.js';
import type { DriverRun, StoredOptions } from './replay-drivers.js';

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

/**
 * The agent's deny hook proved live by its driver's probe (a run whose probe call must come back blocked; cached
 * per binary and settings), said once when it was run; not live, a refusal before anything of the user's runs.
 */
async function hookProved<Probed extends { cached: boolean }>(
  agent: { name: string; hook: string; tested: string; option: string },
  found: { path: string; version?: string },
  prove: (options: { binary: string; version?: string }) => Promise<Probed>,
  notLive: abstract new (...args: never[]) => Error,
): Promise<Probed> {
  try {
    const probed = await prove({ binary: found.path, ...(found.version ? { version: found.version } : {}) });
    if (!probed.cached) say(`${err.dim(`${agent.name}:`)} its deny hook stops a probe call before it runs`);
    return probed;
  } catch (error) {
    if (error instanceof notLive)
      throw new UserError(
        `refusing to replay through ${found.path}: its ${agent.hook} deny hook is not live (${error.message}), so recorded tools could run`,
        `replay-history is tested with ${agent.name} ${agent.tested}; pass ${agent.option} for that version`,
      );
    throw error;
  }
}

/** The claude binary (its version said) and where its model calls go. */
export async function prepareClaude(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
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

/**
 * The codex binary (its version said), where its model calls go, and the proof that its deny hook is live: a
 * probe run that must come back blocked, or the replay refuses before anything of the user's is run.
 */
export async function prepareCodex(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'codex',
    () => findCodex(stored.codexBin),
    CodexNotFound,
    codexVersion,
    `pass --codex-bin PATH, or npm i -g @openai/codex@${codexVersion}`,
  );
  const upstream = codexUpstream(stored);
  const { models } = await hookProved(
    { name: 'codex', hook: 'PreToolUse', tested: codexVersion, option: '--codex-bin' },
    found,
    proveHookLive,
    HookNotLive,
  );
  return (run) =>
    replayCodex({
      ...agentRun(run),
      upstream,
      binary: found.path,
      models,
      ...(stored.contextLimit ? { compactAt: stored.contextLimit } : {}),
    });
}

/**
 * The qwen binary (its version said), where its model calls go, and the proof that its deny hook is live: a
 * probe run that must come back denied with our reason, or the replay refuses before anything of the user's runs.
 */
export async function prepareQwen(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'qwen',
    () => findQwen(stored.qwenBin),
    QwenNotFound,
    qwenVersion,
    `pass --qwen-bin PATH, or npm i -g @qwen-code/qwen-code@${qwenVersion}`,
  );
  const upstream = qwenUpstream(stored);
  await hookProved(
    { name: 'qwen', hook: 'PreToolUse', tested: qwenVersion, option: '--qwen-bin' },
    found,
    proveQwenHookLive,
    QwenHookNotLive,
  );
  return (run) => replayQwen({ ...agentRun(run), upstream, binary: found.path });
}

/**
 * The gemini binary (its version said), where its model calls go, and the proof that its deny hook is live: a
 * probe run that must come back blocked with our reason, or the replay refuses before anything of the user's runs.
 */
export async function prepareGemini(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
  if (stored.sandbox) requireSandbox();
  const found = located(
    'gemini',
    () => findGemini(stored.geminiBin),
    GeminiNotFound,
    geminiVersion,
    `pass --gemini-bin PATH, or npm i -g @google/gemini-cli@${geminiVersion}`,
  );
  const upstream = geminiUpstream(stored);
  await hookProved(
    { name: 'gemini', hook: 'BeforeTool', tested: geminiVersion, option: '--gemini-bin' },
    found,
    proveGeminiHookLive,
    GeminiHookNotLive,
  );
  return (run) => replayGemini({ ...agentRun(run), upstream, binary: found.path });
}

/** The binary, where its model calls go, the tools it offers, and a sandbox check. */
export async function prepareOpencode(stored: StoredOptions): Promise<(run: DriverRun) => Promise<void>> {
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

/** What the model driving an agent may be: the recorded turns, or an endpoint speaking the agent's own wire. */
type AgentModel = { kind: 'recorded' } | { kind: 'http'; baseURL: string; model: string; apiKey?: string };

/** A `--model` kind an agent's wire accepts: where its key and base URL come from when not given. */
interface Wire {
  kind: string;
  /** Environment variables holding the API key, first found wins. */
  keys: string[];
  baseEnv?: string;
  base: string;
}

/** `--model` for a real-agent driver: the recorded turns, or one of the wires the agent speaks; else why not. */
function upstreamOf(
  stored: StoredOptions,
  wires: Wire[],
  refusal: { what: string; hint: string },
  env: NodeJS.ProcessEnv = process.env,
): AgentModel {
  const { kind, model } = specOf(stored.model);
  if (kind === 'recorded') return { kind: 'recorded' };
  const wire = wires.find((w) => w.kind === kind);
  if (!wire) throw new UserError(`${refusal.what}: --model ${stored.model} is not one`, refusal.hint);
  const apiKey = wire.keys.map((key) => env[key]).find((value) => value !== undefined);
  return {
    kind: 'http',
    baseURL: stored.baseUrl ?? (wire.baseEnv ? env[wire.baseEnv] : undefined) ?? wire.base,
    model,
    ...(apiKey ? { apiKey } : {}),
  };
}

const openai: Wire = {
  kind: 'openai',
  keys: ['OPENAI_API_KEY'],
  baseEnv: 'OPENAI_BASE_URL',
  base: 'https://api.openai.com/v1',
};
const ollama: Wire = { kind: 'ollama', keys: [], base: 'http://127.0.0.1:11434/v1' };

const claudeUpstream = (stored: StoredOptions): ClaudeModel =>
  upstreamOf(
    stored,
    [
      {
        kind: 'anthropic',
        keys: ['ANTHROPIC_API_KEY'],
        baseEnv: 'ANTHROPIC_BASE_URL',
        base: 'https://api.anthropic.com',
      },
    ],
    {
      what: '--agent claude-code speaks the Anthropic Messages wire',
      hint: 'use recorded, or anthropic:MODEL (with --base-url for any server speaking /v1/messages: vLLM, llama.cpp, ollama)',
    },
  );

const codexUpstream = (stored: StoredOptions): CodexModel =>
  upstreamOf(stored, [{ ...openai, kind: 'responses' }], {
    what: '--agent codex speaks the OpenAI Responses wire',
    hint: 'use recorded, or responses:MODEL (with --base-url for any server speaking /v1/responses: OpenAI, vLLM)',
  });

const qwenUpstream = (stored: StoredOptions): QwenModel =>
  upstreamOf(stored, [openai, ollama], {
    what: '--agent qwen speaks the OpenAI chat-completions wire',
    hint: 'use recorded, openai:MODEL (with --base-url for any compatible server: vLLM, llama.cpp, DashScope) or ollama:MODEL',
  });

const geminiUpstream = (stored: StoredOptions): GeminiModel =>
  upstreamOf(
    stored,
    [
      {
        kind: 'gemini',
        keys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
        baseEnv: 'GOOGLE_GEMINI_BASE_URL',
        base: 'https://generativelanguage.googleapis.com',
      },
    ],
    {
      what: '--agent gemini speaks the Gemini API wire',
      hint: 'use recorded, or gemini:MODEL (with --base-url for any server speaking /v1beta/models/MODEL:streamGenerateContent)',
    },
  );

const opencodeUpstream = (stored: StoredOptions): Upstream =>
  upstreamOf(stored, [openai, ollama], {
    what: '--agent opencode reaches the model through an OpenAI-compatible proxy',
    hint: 'use recorded, openai:MODEL (with --base-url for any compatible server) or ollama:MODEL',
  });

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
