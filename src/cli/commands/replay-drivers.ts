// The drivers `replay` can run a session through, as one table: the builtin loop (our own requests to a
// provider) and each real agent (its own binary, prompt and tools). An entry says which options it takes,
// what of them a run stores to be resumed, and how it is prepared — everything that can be wrong with its
// setup is found there, before the run is created — and prepared, how it replays the run's sessions.
// replay-action.ts does the rest the same way for all of them: the run, the pairs file, the checker, progress.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ShownSettings } from '../../replay/elide.js';
import { replayForced, type SessionEnd } from '../../replay/engine.js';
import { replayFree } from '../../replay/free.js';
import type { Pair, PairsWriter } from '../../replay/pairs.js';
import { ProviderSpecError, providerFor } from '../../replay/providers/index.js';
import type { Driver, RunStore } from '../../store/runs.js';
import type { SessionStore } from '../../store/sessions.js';
import type { CopyOnWrite } from '../../verify/overlay.js';
import { UserError } from '../errors.js';
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

/**
 * A real agent's preparation, loaded when that driver is used: the agents' drivers (their proxies, hook servers,
 * execa) are most of replay's modules, and a builtin replay needs none of them.
 */
function agent(name: keyof typeof import('./replay-agents.js')): DriverEntry['prepare'] {
  return async (stored) => {
    const agents = await import('./replay-agents.js');
    return agents[name](stored);
  };
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
    prepare: agent('prepareOpencode'),
  },
  'claude-code': {
    agent: 'Claude Code',
    options: ['--claude-bin', '--workspace', '--sandbox'],
    store: (options) => ({
      driver: 'claude-code',
      ...(options.claudeBin ? { claudeBin: resolve(options.claudeBin) } : {}),
      ...agentOptions(options),
    }),
    prepare: agent('prepareClaude'),
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
    prepare: agent('prepareCodex'),
  },
  qwen: {
    agent: 'Qwen Code',
    options: ['--qwen-bin', '--workspace', '--sandbox'],
    store: (options) => ({
      driver: 'qwen',
      ...(options.qwenBin ? { qwenBin: resolve(options.qwenBin) } : {}),
      ...agentOptions(options),
    }),
    prepare: agent('prepareQwen'),
  },
  gemini: {
    agent: 'Gemini CLI',
    options: ['--gemini-bin', '--workspace', '--sandbox'],
    store: (options) => ({
      driver: 'gemini',
      ...(options.geminiBin ? { geminiBin: resolve(options.geminiBin) } : {}),
      ...agentOptions(options),
    }),
    prepare: agent('prepareGemini'),
  },
};

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
