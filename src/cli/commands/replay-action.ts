// What `replay` does, loaded only when it runs: the drivers, the engine and the checker take a good part of a
// second to load, which `replay --help` and every other command should not pay.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync, truncateSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  kindName,
  removeTemporaries,
  SinkError,
  sharesStdout,
  type Target,
  targetOf,
} from '../../export/sink.js';
import { anotherAlive, ownerState, parseOwner, thisProcess } from '../../processes.js';
import { callKeys } from '../../replay/chat.js';
import { requestDigest, type SessionEnd } from '../../replay/engine.js';
import { checkGates, formatGates } from '../../replay/gates.js';
import { formatRunJunit } from '../../replay/junit.js';
import { type Pair, PairsFileError, PairsWriter } from '../../replay/pairs.js';
import { ProviderError } from '../../replay/providers/types.js';
import type { Db } from '../../store/db.js';
import { fullDisk } from '../../store/errors.js';
import { keySession, type Match, RunStore, turnKey } from '../../store/runs.js';
import { SessionStore } from '../../store/sessions.js';
import { ExitCode, UserError } from '../errors.js';
import { anyGate, gatesOf } from '../gates.js';
import { collectOver } from '../memory.js';
import { err, progressBar, say, warn, writeOut } from '../output.js';
import { commandLine, formatRunMarkdown, reportSessions, writeHtml, writeMarkdown } from '../report.js';
import {
  apart,
  checkReportFiles,
  htmlFile,
  markdownFile,
  notAnInput,
  writeVerdict,
} from '../report-files.js';
import { formatRunHtml } from '../report-html.js';
import { onStop } from '../signals.js';
import type { ReplayOptions } from './replay.js';
import { checkJson, finishCheck, formatCheck, startCheck } from './replay-check.js';
import { type DriverOption, drivers, type StoredOptions } from './replay-drivers.js';
import { formatFigures, runJson } from './runs-action.js';
import { resolveTargets } from './targets.js';

/** Signals that stop a replay the way Ctrl-C does. */

/** Turns between two looks at the heap, and what it may hold before a full collection (`collectOver`). */
const heapCheckEvery = 32;
const collectIfOver = collectOver(128 * 1024 * 1024);

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
  try {
    return await replayRun(db, targets, options, modeGiven);
  } catch (error) {
    // A pairs file that could not be written (a full disk, a reader gone, a device that refuses): one line, exit 1.
    if (error instanceof SinkError) throw new UserError(error.message, error.hint, ExitCode.failure);
    throw error;
  }
}

async function replayRun(
  db: Db,
  targets: string[],
  options: ReplayOptions,
  modeGiven: boolean,
): Promise<number> {
  const runs = new RunStore(db);
  /** This process, kept with the run while it runs (`runs` tells a run whose process is gone; a resume waits). */
  const owner = thisProcess();
  const sessions = new SessionStore(db);
  // A gate file that cannot be read or says something unknown is a usage error, found before anything runs.
  const gates = gatesOf(options);
  const junit = options.junit ? resolve(options.junit) : undefined;
  /** What the run reads from files named by options: no output may be one of them. */
  const inputs = [
    ['--gates', options.gates],
    ['--system-prompt', options.systemPrompt],
  ] as const;
  checkReportFiles({
    junit,
    report: options.report ? resolve(options.report) : undefined,
    store: db,
    inputs,
  });
  /**
   * The pairs file is none of the run's other outputs, written at its end over the pairs, nor a file it reads;
   * asked before the file is opened (--force empties it).
   */
  const outApart = (out: string) =>
    apart(
      [
        ['--out', out],
        ['--junit', junit],
        ...(options.report ? [markdownFile(options.report), htmlFile(options.report)] : []).map(
          (file) => ['--report', resolve(file)] as const,
        ),
      ],
      inputs,
    );
  let runId: string;
  let stored: StoredOptions;
  let sessionIds: string[];
  let outFile: string;
  let mode: 'new' | 'append' | 'resume' | 'stream';
  /** The pairs go to our own stdout (`--out /dev/stdout`, `--out -`): the run's figures go to stderr instead. */
  let pairsOnStdout = false;

  if (options.resume) {
    const run = runs.resolve(options.resume);
    // Before its pairs file is touched (a resume cuts a torn last line): a run whose process still writes it is
    // not resumed from a second one.
    runs.take(run.id, owner, (stored) => {
      const holder = parseOwner(stored);
      if (holder && ownerState(holder) === 'elsewhere')
        warn(
          `run ${run.id} was started on ${holder.host}, which cannot be asked whether it still runs it: make sure it does not`,
        );
      if (!anotherAlive(holder)) return undefined;
      return new UserError(
        `run ${run.id} is still running (process ${holder.pid} on this machine): resuming it now would write its pairs from two processes`,
        holder.since
          ? `wait for it to end, or stop it (kill ${holder.pid}) and resume it then`
          : `wait for it to end, or stop it (kill ${holder.pid}, once you have checked that process ${holder.pid} is that replay: this system does not say when a process started) and resume it then`,
      );
    });
    runId = run.id;
    stored = JSON.parse(run.options) as StoredOptions;
    sessionIds = runs.sessions(run.id);
    outFile = run.out_file;
    outApart(outFile);
    mode = 'resume';
    notAnInput(db, [['--out', outFile]]);
    const target = pairsTarget(outFile);
    if (!target.atomic)
      throw new UserError(
        `run ${run.id} wrote its pairs to ${outFile}, ${aKind(target)}: they cannot be read back to go on from them`,
        'replay its sessions again, with --out FILE to go on from later',
      );
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
      ...drivers[options.agent].store(options),
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
    const entry = drivers[options.agent];
    if (entry.agent) {
      checkAgentOptions(options, modeGiven, entry.agent);
      stored.mode = 'free';
    }
    // Each driver's own options, refused with any other.
    const given: [unknown, DriverOption][] = [
      [options.opencodeBin, '--opencode-bin'],
      [options.workspace, '--workspace'],
      [options.sandbox, '--sandbox'],
      [options.contextLimit, '--context-limit'],
      [options.claudeBin, '--claude-bin'],
      [options.codexBin, '--codex-bin'],
      [options.qwenBin, '--qwen-bin'],
      [options.geminiBin, '--gemini-bin'],
    ];
    for (const [value, name] of given) {
      if (!value || entry.options.includes(name)) continue;
      const takers = Object.entries(drivers).filter(([, other]) => other.options.includes(name));
      throw new UserError(
        `${name} only applies with ${takers.map(([agent]) => `--agent ${agent}`).join(' or ')}`,
      );
    }
    for (const dir of stored.watch ?? []) {
      if (!existsSync(dir) || !statSync(dir).isDirectory())
        throw new UserError(`--watch ${dir}: no such directory`, 'name a directory that exists');
    }
    sessionIds = await resolveTargets(db, targets, options.all === true, undefined, {
      branches: options.branches === true,
    });
    // `--out -` is stdout, as for most tools, not a file named '-'.
    if (options.out === '-') options = { ...options, out: '/dev/stdout' };
    outFile = resolve(options.out);
    notAnInput(db, [['--out', options.out]]);
    outApart(outFile);
    // Found before anything runs: a folder, a path whose folder is missing, a link loop.
    const target = pairsTarget(outFile);
    if (target.kind === 'new' && !existsSync(dirname(outFile)))
      throw new UserError(
        `cannot write ${outFile}: its folder ${dirname(outFile)} does not exist`,
        'create it first, or pass --out FILE in a folder that exists',
      );
    if (target.atomic) {
      // A file another run's process is writing now: --force would empty it under that process, --append cut its
      // line in progress, and either would mix two runs' lines as they are written.
      for (const other of runs.runningInto(outFile)) {
        const holder = parseOwner(other.owner);
        if (anotherAlive(holder))
          throw new UserError(
            `${outFile} is being written by run ${other.id} (process ${holder.pid} on this machine)`,
            'wait for it to end, or pass another --out',
          );
      }
      const holds = existsSync(outFile) && statSync(outFile).size > 0;
      if (holds && options.force) truncateSync(outFile, 0);
      mode = holds && options.append ? 'append' : 'new';
    } else {
      // A pipe, `/dev/stdout`, a device: written to, never read back (nothing to refuse, keep or cut).
      if (options.append)
        throw new UserError(
          `--append reads the pairs already in --out, and ${outFile} is ${aKind(target)}: it cannot be read back`,
          'append to a file, or leave --append out to write the pairs to it',
        );
      mode = 'stream';
      pairsOnStdout = sharesStdout(target);
      if (pairsOnStdout && options.json)
        throw new UserError(
          `--json and --out ${options.out} both write to stdout: the figures would be mixed into the pairs`,
          'send the pairs to a file, or leave --json out (the figures then go to stderr)',
        );
    }
  }

  const driver = stored.driver ?? 'builtin';
  const entry = drivers[driver];
  // Everything that can be wrong with the driver's setup is found before the run is created.
  const start = await entry.prepare(stored);

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
  if (mode === 'resume' && entry.agent) {
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
  if (mode === 'resume') {
    // A pair is written before its turn is stored: a turn the store has as answered with no pair in the file means
    // the file lost it since (cut, replaced, moved, a crash that kept the store's write and not the file's).
    // Counted done, it would never be written again and the run would end "done" without it: its session is
    // replayed again from its start instead (the only way every driver and mode can go on), and said so.
    const lost = [...runs.doneTurns(runId)].filter((key) => !opened.done.has(key));
    const sessionsLost = new Set(lost.map(keySession));
    if (sessionsLost.size > 0) {
      opened.writer.close();
      const replaced = PairsWriter.supersede(outFile, runId, sessionsLost);
      for (const id of sessionsLost) runs.restartSession(runId, id);
      warn(
        `${outFile} holds no pair for ${lost.length} turn(s) the run had answered (the file was cut, replaced or moved since): ${sessionsLost.size} session(s) replayed again from their start${replaced > 0 ? `, their ${replaced} other pair(s) taken out of the file` : ''}`,
      );
      opened = PairsWriter.open(outFile, 'resume', runId);
    }
    runs.reopen(runId, owner);
  } else
    runs.create(
      { id: runId, model: stored.model, mode: stored.mode, driver, options: stored, outFile, owner },
      sessionIds,
    );
  const done = new Set([...runs.doneTurns(runId), ...opened.done]);

  const check = await startCheck({
    runId,
    dbFile: options.db,
    outFile,
    cwds: stored.workspace ? [stored.workspace] : sessionIds.map((id) => sessions.row(id)?.cwd ?? null),
    watch: stored.watch ?? [],
    // The JUnit file is ours, as the pairs file is.
    exclude: [...(stored.exclude ?? []), ...(junit ? [junit, `${junit}.tmp`] : [])],
    // A real agent runs against a copy-on-write view of the checked directories where one can be made.
    ...(entry.agent ? { agent: { sandbox: stored.sandbox === true } } : {}),
  });
  const bar = progressBar('replay');
  let asked = 0;
  const total = sessionIds.reduce((n, id) => n + (sessions.row(id)?.turn_count ?? 0), 0) - done.size;
  // Ctrl-C, `kill`, a closed terminal: the run is marked interrupted (never left 'running') and can be resumed.
  const stopped = onStop((signal) => {
    runs.finish(runId, 'interrupted', `stopped by ${signal}`);
    bar.end();
    check.checker?.abandon();
    // a --junit or --report file being written: left as it was
    removeTemporaries();
    say(`\ninterrupted (${signal}); continue with: replay-history replay --resume ${runId}`);
  });
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
      // V8 lets garbage pile up with the allocation rate: a full collection when the heap holds more than the
      // limit keeps peak memory from growing with the length of the run.
      if (asked % heapCheckEvery === 0) collectIfOver();
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
    await start({
      runId,
      stored,
      sessions,
      runs,
      sessionIds,
      writer: opened.writer,
      done,
      existing,
      check: { roots: check.roots, ...(check.view ? { view: check.view } : {}) },
      onTurn,
      onSession,
    });
    // A run none of whose turns was answered did not do its job, whatever the reason: it is a failed run.
    const counts = runs.turnCounts(runId);
    if (counts.done === 0 && counts.failed > 0) runs.finish(runId, 'failed', 'every turn failed');
    else runs.finish(runId, 'done');
  } catch (error) {
    failure = error;
    try {
      runs.finish(runId, 'failed', (error as Error).message);
    } catch {
      // The store cannot take it either (its disk is full): the run stays as it was, and --resume goes on from it.
    }
  } finally {
    stopped();
    bar.end();
    opened.writer.close();
  }
  // The check is finished and stored whatever became of the run: side effects matter most when it failed.
  const report = await finishCheck(check, runs, runId);
  const sideEffects = report !== undefined && report.changes.length > 0;
  if (failure === undefined && check.unsaved !== undefined) {
    // The run is whole; only its check could not be stored: said here, since `runs` will not have it.
    if (report) say(formatCheck(check, report));
    const full = fullDisk(db.name, check.unsaved, true);
    throw new UserError(
      `the side-effect check above could not be stored with run ${runId}: ${full?.message ?? (check.unsaved as Error).message}`,
      'free some space there; the pairs and turns are stored, only the check is not (runs will show none)',
      sideEffects ? ExitCode.sideEffects : ExitCode.failure,
    );
  }
  if (failure !== undefined) {
    if (report && !options.json) say(formatCheck(check, report));
    if (failure instanceof ProviderError) {
      throw new UserError(
        failure.message,
        `nothing more was asked; fix it and continue with --resume ${runId}`,
        sideEffects ? ExitCode.sideEffects : ExitCode.failure,
      );
    }
    const full = fullDisk(db.name, failure, true);
    if (full)
      throw new UserError(
        full.message,
        `free some space there and continue with: replay-history replay --resume ${runId} (every pair and turn stored so far is kept)`,
        sideEffects ? ExitCode.sideEffects : ExitCode.failure,
      );
    throw failure;
  }

  const figures = runs.figures(runId);
  const run = runs.get(runId);
  const perSession = [...runs.sessionFigures(runId)];
  const verdicts = checkGates(gates, figures, perSession);
  if (run && options.json) {
    writeOut(
      JSON.stringify(
        {
          ...runJson(run, figures),
          sideEffects: checkJson(check, report),
          ...(anyGate(gates) ? { gates: verdicts } : {}),
        },
        null,
        2,
      ),
    );
  } else if (run) {
    // Nothing but pairs on stdout when that is where they go: one stream of JSON lines for its reader.
    const print = pairsOnStdout ? say : writeOut;
    print(formatFigures(run, figures));
    print(formatCheck(check, report));
    if (verdicts.length > 0) print(formatGates(verdicts));
    say(`${err.dim('pairs:')} ${outFile}`);
  }
  if (junit && run) {
    await writeVerdict(
      junit,
      formatRunJunit({
        runId,
        startedAt: run.started_at,
        seconds: run.finished_at ? (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000 : 0,
        sessions: perSession,
        verdicts,
        ...(report ? { sideEffects: { roots: report.roots, changes: report.changes } } : {}),
      }),
    );
  }
  if (run && (options.report || process.env.GITHUB_STEP_SUMMARY)) {
    const markdown = formatRunMarkdown({
      run,
      figures,
      sessions: perSession,
      verdicts,
      ...(report ? { sideEffects: { changes: report.changes.length, roots: report.roots } } : {}),
      command: commandLine(),
    });
    if (options.report) {
      const file = resolve(options.report);
      say(`${err.dim('report:')} ${await writeMarkdown(file, markdown)}`);
      const html = formatRunHtml({
        run,
        figures,
        verdicts,
        sessions: reportSessions(runs, sessions, runId, perSession),
        command: commandLine(),
        ...(report ? { sideEffects: { roots: report.roots, changes: report.changes } } : {}),
      });
      say(`${err.dim('report:')} ${await writeHtml(file, html)}`);
    } else await writeMarkdown('', markdown, process.env, false);
  }
  if (sideEffects) return ExitCode.sideEffects;
  if (verdicts.some((verdict) => !verdict.passed)) return ExitCode.divergence;
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

/** What --out is, said as a usage error when it cannot be a pairs file at all (a folder, a link loop, a socket). */
function pairsTarget(path: string): Target {
  try {
    const target = targetOf(path);
    if (target.kind === 'socket')
      throw new UserError(
        `cannot write ${path}: it is ${aKind(target)}, which cannot be opened as a file`,
        'pass --out FILE, or send stdout to a file or a pipe (| or >) for --out /dev/stdout',
      );
    return target;
  } catch (error) {
    if (error instanceof SinkError)
      throw new UserError(error.message, 'pass --out FILE in a folder that exists');
    throw error;
  }
}

/** `a FIFO`, `a pipe`, `an open descriptor (socket)`: a pairs target that is no file, as a sentence names it. */
function aKind(target: Target): string {
  return target.descriptor && target.kind !== 'fifo'
    ? `an open descriptor (${kindName(target)})`
    : `a ${kindName(target)}`;
}
