import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
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
import { type Db, openDb } from '../../store/db.js';
import { type Driver, keySession, type Match, RunStore, turnKey } from '../../store/runs.js';
import { SessionStore } from '../../store/sessions.js';
import { probeSandbox, SandboxUnavailable } from '../../verify/sandbox.js';
import { ExitCode, UserError } from '../errors.js';
import { collectGarbage } from '../memory.js';
import { err, progressBar, say, warn, writeOut } from '../output.js';
import { demoOption, useDemo } from './demo.js';
import { atLeast, dbOption, jsonOption, minResultBytes } from './options.js';
import { checkJson, finishCheck, formatCheck, startCheck } from './replay-check.js';
import { formatFigures, runJson } from './runs.js';
import { resolveTargets } from './targets.js';

interface ReplayOptions {
  db: string;
  json?: boolean;
  all?: boolean;
  model: string;
  baseUrl?: string;
  mode: 'forced' | 'free';
  onMiss: 'error' | 'stop';
  maxTurns: number;
  out: string;
  concurrency: number;
  resume?: string;
  append?: boolean;
  force?: boolean;
  systemPrompt?: string;
  timeout: number;
  retries: number;
  stream?: boolean;
  maxTokens?: number;
  watch: string[];
  exclude: string[];
  elideRepeats?: boolean;
  elideTool: string[];
  maxResultBytes?: number;
  agent: Driver;
  contextLimit?: number;
  opencodeBin?: string;
  workspace?: string;
  sandbox?: boolean;
  quiet?: boolean;
  demo?: boolean;
}

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
  /** Absolute. */
  workspace?: string;
  sandbox?: boolean;
}

const positive = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UserError(`${name} takes a whole number from 1, not '${value}'`);
  return n;
};

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('ask a model again for recorded turns; every tool result comes from the recording')
    .argument('[targets...]', 'session ids or prefixes, or log files/directories (ingested first)')
    .option('--all', 'replay every stored session')
    .option('--model <provider:model>', 'recorded, openai:MODEL, ollama:MODEL or anthropic:MODEL', 'recorded')
    .option(
      '--base-url <url>',
      'the endpoint: with /v1 for OpenAI-compatible servers (http://127.0.0.1:8000/v1), without for Anthropic ' +
        '(default: OPENAI_BASE_URL, else https://api.openai.com/v1; ollama: http://127.0.0.1:11434/v1; ' +
        'anthropic: ANTHROPIC_BASE_URL, else https://api.anthropic.com)',
    )
    .addOption(
      new Option(
        '--mode <mode>',
        'forced: each original turn asked again with its original context; free: the model drives',
      )
        .choices(['forced', 'free'])
        .default('forced'),
    )
    .addOption(
      new Option(
        '--on-miss <policy>',
        'free mode, a call not in the recording: error (tell the model) or stop (end the session)',
      )
        .choices(['error', 'stop'])
        .default('error'),
    )
    .option(
      '--max-turns <factor>',
      'free mode: model calls per session, as a multiple of the original’s turns',
      (v) => {
        const n = Number(v);
        if (!(n > 0)) throw new UserError(`--max-turns takes a positive number, not '${v}'`);
        return n;
      },
      2,
    )
    .option('--out <file>', 'where pairs go, one JSON line per model turn', 'pairs.jsonl')
    .option(
      '--concurrency <n>',
      'model calls in flight at once (free mode: sessions at once)',
      positive('--concurrency'),
      4,
    )
    .option('--resume <run-id>', 'continue a run that was interrupted: finished turns are not asked again')
    .option('--append', 'add to an --out file that already holds pairs')
    .option('--force', 'overwrite an --out file that already holds pairs')
    .option(
      '--system-prompt <file>',
      'use this system prompt instead of the recorded one (or the per-agent default)',
    )
    .option('--timeout <seconds>', 'per model call', positive('--timeout'), 600)
    .option(
      '--retries <n>',
      'retries of a call on 429/5xx/timeouts, with backoff and Retry-After',
      (v) => Number(v),
      3,
    )
    .option('--stream', 'ask the server to stream its answers')
    .option(
      '--max-tokens <n>',
      'cap on each answer (Anthropic requires one: default 4096)',
      positive('--max-tokens'),
    )
    .option(
      '--elide-repeats',
      'show a read-only tool result identical to one already in the context as a one-line marker',
    )
    .option(
      '--elide-tool <name>',
      'treat this tool as read-only for --elide-repeats too, repeatable (the catalogue decides otherwise)',
      collect,
      [],
    )
    .option(
      '--max-result-bytes <n>',
      'cut each tool result shown to the model to this many bytes, with a note saying so',
      atLeast('--max-result-bytes', minResultBytes),
    )
    .option(
      '--watch <dir>',
      'also check this directory for side effects, repeatable (each session’s recorded cwd is checked when it exists here)',
      collect,
      [],
    )
    .option('--exclude <path>', 'leave this path out of the side-effect check, repeatable', collect, [])
    .addOption(
      new Option(
        '--agent <driver>',
        'who runs the agent loop: builtin (ours) or opencode (the real opencode binary, every tool answered from the recording)',
      )
        .choices(['builtin', 'opencode'])
        .default('builtin'),
    )
    .option(
      '--opencode-bin <path>',
      `--agent opencode: this opencode binary (default: the pinned ${opencodeVersion}, else opencode on PATH)`,
    )
    .option(
      '--context-limit <tokens>',
      '--agent opencode: the model’s context window, so opencode compacts long sessions as it would for you',
      positive('--context-limit'),
    )
    .option(
      '--workspace <dir>',
      '--agent opencode: run opencode in this directory instead of each session’s recorded cwd',
    )
    .option(
      '--sandbox',
      '--agent opencode: run opencode under bubblewrap with the workspace and --watch directories read-only',
    )
    .option('-q, --quiet', 'no progress on stderr (a bar on a terminal, else a line per finished session)')
    .addOption(demoOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
No tool is ever run. In forced mode the model's tool calls are not followed and every context holds the
results that were recorded; in free mode each call is answered from the recording (the n-th identical call
gets the n-th recorded result; paths, defaults and whitespace are normalised) and a call the recording does
not hold is a miss, stored with the nearest recorded calls. Each turn becomes one line of --out (schema replay-history.pair/v1); the run
and its figures go into the store (see: replay-history runs). A failed turn is recorded with its error and
the run goes on; a wrong key or unknown model stops it at once. Killed? Rerun with --resume RUN_ID.

The run is checked for side effects as \`replay-history verify\` does: a manifest of every entry under the
recorded cwd of each session (where it exists on this machine) and each --watch directory before and after,
with a file-system watcher meanwhile. The store, the pairs file and the checker's own files are left out. Any
change is stored with the run (replay-history runs RUN_ID lists them) and makes the run exit 3.

Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY; local servers need none.

Off a terminal a line per finished session goes to stderr (a progress bar on one; --quiet for neither). Exit
codes: 0 done · 1 a turn failed, or the run was stopped by the provider · 2 a usage error (found before anything
runs) · 3 side effects (outranks 1: said even when turns failed too) · 130/143/129 stopped by SIGINT/SIGTERM/
SIGHUP: the run is marked interrupted and --resume RUN_ID (or a unique prefix of it) goes on.

--agent opencode runs the real opencode binary headless in each session's recorded cwd (or --workspace), in a
private HOME and config of its own: a plugin overrides every built-in tool with one that returns the recorded
result (tools offered to the model byte-identical to opencode's own), and stops any other tool. Its model
calls go through a loopback proxy of ours to --model (recorded, openai:MODEL or ollama:MODEL: an
OpenAI-compatible endpoint), and each agent step becomes a pair, with the prompts exactly as opencode sends
them. Title and summary calls are left out of the pairs. Always free mode: the first user message is piped
in, each later one continues the same opencode session.

Examples:
  $ replay-history replay sample-sessions
  $ replay-history replay 6f1c2a34 --model ollama:qwen2.5-coder:7b --out qwen.jsonl
  $ replay-history replay --all --model openai:gpt-4o-mini --concurrency 8 --json
  $ replay-history replay 6f1c2a34 --mode free --on-miss stop --model anthropic:claude-sonnet-4-6
  $ replay-history replay --resume run_20261130T101500_3f9a2c
  $ replay-history replay 6f1c2a34 --model openai:qwen --base-url http://127.0.0.1:8000/v1 --stream --max-tokens 2048
  $ replay-history replay --all --model ollama:qwen2.5-coder:7b --elide-repeats --max-result-bytes 8192 --quiet
  $ replay-history replay 9a8b7c6d --model openai:qwen --system-prompt prompt.txt --out more.jsonl --append
  $ replay-history replay 6f1c2a34 --mode free --max-turns 1.5 --timeout 120 --retries 5
  $ replay-history replay 6f1c2a34 --watch ~/src/app --exclude ~/src/app/node_modules
  $ replay-history replay c0faf5aa --agent opencode --model ollama:qwen2.5-coder:7b
  $ replay-history replay c0faf5aa --agent opencode --workspace /tmp/todo-api --sandbox`,
    )
    .action(async (targets: string[], options: ReplayOptions, command: Command) => {
      if (options.resume) refuseWithResume(command);
      if (options.demo) ({ targets, options } = useDemo(targets, options, command));
      const db = openDb(options.db, { command: 'replay' });
      try {
        process.exitCode = await replay(db, targets, options, command.getOptionValueSource('mode') === 'cli');
      } finally {
        db.close();
      }
    });
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Signals that stop a replay the way Ctrl-C does. */
const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Options that contradict each other, or that the command would silently ignore, are refused before anything
 * is read or written.
 */
function refuseContradictions(targets: string[], options: ReplayOptions): void {
  if (options.append && options.force)
    throw new UserError(
      '--append and --force contradict each other: --append keeps the pairs in --out, --force deletes them',
    );
  if (options.all && targets.length > 0)
    throw new UserError(
      `--all replays every stored session: drop it or the targets (${targets.slice(0, 3).join(' ')}${targets.length > 3 ? ' …' : ''})`,
    );
  if (options.resume && (targets.length > 0 || options.all))
    throw new UserError('--resume takes no targets: the run knows its sessions');
  if (options.resume && (options.append || options.force))
    throw new UserError('--resume continues the run’s own pairs file: --append and --force do not apply');
}

/** With --resume the run goes on with the options it was started with: changing one is refused, not ignored. */
function refuseWithResume(command: Command): void {
  const kept = new Set(['resume', 'db', 'json', 'quiet']);
  const given = command.options
    .filter((option) => !kept.has(option.attributeName()))
    .filter((option) => command.getOptionValueSource(option.attributeName()) === 'cli')
    .map((option) => option.long ?? option.flags);
  if (given.length > 0)
    throw new UserError(
      `--resume goes on with the options the run was started with: ${given.join(', ')} cannot be changed`,
      'start a new run to use other options (replay-history runs RUN_ID shows the run’s own)',
    );
}

/** Turns between two full garbage collections during a replay. */
const gcEvery = 256;

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  return `run_${stamp}_${randomBytes(3).toString('hex')}`;
}

async function replay(db: Db, targets: string[], options: ReplayOptions, modeGiven = false): Promise<number> {
  const runs = new RunStore(db);
  const sessions = new SessionStore(db);
  let runId: string;
  let stored: StoredOptions;
  let sessionIds: string[];
  let outFile: string;
  let mode: 'new' | 'append' | 'resume';

  refuseContradictions(targets, options);
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
      checkOpencodeOptions(options, modeGiven);
      stored.mode = 'free';
    } else {
      for (const [given, name] of [
        [options.opencodeBin, '--opencode-bin'],
        [options.workspace, '--workspace'],
        [options.sandbox, '--sandbox'],
        [options.contextLimit, '--context-limit'],
      ] as const) {
        if (given) throw new UserError(`${name} only applies with --agent opencode`);
      }
    }
    for (const dir of stored.watch ?? []) {
      if (!existsSync(dir) || !statSync(dir).isDirectory())
        throw new UserError(`--watch ${dir}: no such directory`, 'name a directory that exists');
    }
    sessionIds = resolveTargets(db, targets, options.all === true);
    outFile = resolve(options.out);
    const holds = existsSync(outFile) && statSync(outFile).size > 0;
    if (holds && options.force) truncateSync(outFile, 0);
    mode = holds && options.append ? 'append' : 'new';
  }

  const driver = stored.driver ?? 'builtin';
  // Everything that can be wrong with the opencode driver's setup is found before the run is created.
  const opencode = driver === 'opencode' ? await prepareOpencode(stored) : undefined;

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
    if (!opencode)
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
  if (mode === 'resume' && driver === 'opencode') {
    // opencode cannot go on from the middle of a session: one the killed run had begun but not finished is
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
          `${id.slice(0, 12)}: begun by the interrupted run; opencode cannot continue a session mid-way, so it is replayed again from its start`,
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
    ...(opencode ? { agent: { sandbox: stored.sandbox === true } } : {}),
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
    let current = '';
    const onTurn = (event: { sessionId: string }) => {
      current = event.sessionId.slice(0, 8);
      if (!options.quiet)
        bar.update(
          ++asked,
          Math.max(total, asked),
          `turns · ${finished}/${sessionIds.length} sessions · ${current}`,
        );
      else asked++;
      // As in ingest: V8 lets garbage pile up with the allocation rate; a full collection every few hundred
      // turns keeps peak memory from growing with the length of the run.
      if (asked % gcEvery === 0) collectGarbage();
    };
    const onSession = (end: SessionEnd) => {
      finished++;
      if (options.quiet || bar.enabled) return;
      const turns = runs.sessionTurns(runId, end.sessionId);
      say(
        `${err.dim('session')} ${finished}/${sessionIds.length} ${end.sessionId.slice(0, 8)} ${end.status}: ${turns.done} turn(s)` +
          `${turns.failed > 0 ? `, ${turns.failed} failed` : ''}${end.note ? ` (${end.note})` : ''}`,
      );
    };
    if (opencode) {
      await replayOpencode({
        runId,
        model: stored.model,
        upstream: opencode.upstream,
        sessions,
        runs,
        sessionIds,
        writer: opened.writer,
        concurrency: stored.concurrency,
        onMiss: stored.onMiss ?? 'error',
        maxTurnsFactor: stored.maxTurns ?? 2,
        binary: opencode.binary,
        tools: opencode.tools,
        ...(stored.shown ? { shown: stored.shown } : {}),
        ...(stored.contextLimit
          ? { limit: { context: stored.contextLimit, output: stored.maxTokens ?? 4096 } }
          : {}),
        ...(stored.workspace ? { workspace: stored.workspace } : {}),
        ...(stored.sandbox ? { sandbox: { readOnly: check.roots } } : {}),
        ...(check.view ? { view: check.view } : {}),
        timeoutMs: stored.timeout * 1000,
        onTurn,
        onSession,
        onNote: (text) => warn(text),
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
    const { turnsDone, turnsFailed } = runs.figures(runId);
    if (turnsDone === 0 && turnsFailed > 0) runs.finish(runId, 'failed', 'every turn failed');
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

/** The opencode driver's options that cannot go with it, found before anything runs. */
function checkOpencodeOptions(options: ReplayOptions, modeGiven: boolean): void {
  if (modeGiven && options.mode === 'forced')
    throw new UserError('--agent opencode replays in free mode: opencode drives each session itself');
  if (options.systemPrompt !== undefined)
    throw new UserError(
      '--system-prompt does not apply with --agent opencode: opencode writes its own system prompt',
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
  if (stored.sandbox) {
    try {
      probeSandbox();
    } catch (error) {
      if (error instanceof SandboxUnavailable) throw new UserError(error.message, error.hint);
      throw error;
    }
  }
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
  let kind: string;
  let model: string;
  try {
    ({ kind, model } = parseSpec(stored.model));
  } catch (error) {
    if (error instanceof ProviderSpecError) throw new UserError(error.message);
    throw error;
  }
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
