// `runs` and `runs check`: the runs of the store, their figures and side effects, judged by gates. Loaded by the
// commands' actions only (runs.ts registers them).
import { resolve } from 'node:path';
import { ownerState, parseOwner } from '../../processes.js';
import { checkGates, formatGates } from '../../replay/gates.js';
import { formatRunJunit } from '../../replay/junit.js';
import { openDb } from '../../store/db.js';
import {
  type CheckSummary,
  type FailureCause,
  type MissRecord,
  type RunFigures,
  type RunRow,
  RunStore,
} from '../../store/runs.js';
import { SessionStore } from '../../store/sessions.js';
import { ExitCode, UserError } from '../errors.js';
import { anyGate, type GateFlags, gatesOf } from '../gates.js';
import { formatBytes, table, writeOut } from '../output.js';
import { commandLine, formatRunMarkdown, reportSessions, writeHtml, writeMarkdown } from '../report.js';
import { checkReportFiles, writeVerdict } from '../report-files.js';
import { formatRunHtml } from '../report-html.js';

/** A share as a percentage; – where it is undefined (no calls made, or none recorded), never 100%. */
const percent = (share: number | null) => (share === null ? '–' : `${(share * 100).toFixed(1)}%`);

function wallSeconds(run: RunRow): number | null {
  if (!run.finished_at) return null;
  return (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
}

/** What the side-effect checks of a run found, for the RUNS table: – when it was never checked. */
function sideEffectsCell(check: CheckSummary): string {
  if (check.checks === 0) return '–';
  return check.changes === 0 ? 'none' : String(check.changes);
}

/**
 * The run as it stands now: one the store still has as running whose process is gone was stopped without a word
 * (SIGKILL, a crash, its disk full before it could say so) and is shown as interrupted, with how to go on. The
 * store is not changed (this is read by commands that only read it); the next resume takes the run over.
 */
export function asItStands(run: RunRow): RunRow {
  if (run.status !== 'running') return run;
  const owner = parseOwner(run.owner);
  if (!owner || ownerState(owner) !== 'gone') return run;
  return {
    ...run,
    status: 'interrupted',
    error: `its process (pid ${owner.pid}) ended before it finished; continue with: replay-history replay --resume ${run.id}`,
  };
}

/** A run and its figures as machine output (`runs --json`, `replay --json`). */
export function runJson(run: RunRow, figures: RunFigures, seconds = wallSeconds(run)) {
  return {
    id: run.id,
    model: run.model,
    mode: run.mode,
    driver: run.driver,
    status: run.status,
    error: run.error,
    out: run.out_file,
    startedAt: run.started_at,
    finishedAt: run.finished_at,
    wallSeconds: seconds,
    options: JSON.parse(run.options) as unknown,
    ...figures,
  };
}

/** The figures of one run, for people. */
export function formatFigures(run: RunRow, f: RunFigures, seconds = wallSeconds(run)): string {
  const diverged = f.firstDivergence.filter((d) => d.turn !== null);
  const lines = [
    `run ${run.id}  ${run.model}  ${run.mode}${run.driver === 'builtin' ? '' : ` (${run.driver})`}  ${run.status}${run.error ? ` (${run.error})` : ''}`,
    `turns       ${f.turnsDone} done, ${f.turnsFailed} failed, over ${f.sessions} session(s)`,
    `tool calls  ${f.matches.exact} turn(s) exact, ${f.matches.normalized} normalized, ${f.matches.differs} differ, ${f.matches.none} without calls`,
    `            precision ${percent(f.precision)}, recall ${percent(f.recall)} (${f.callsMatched} of ${f.callsPredicted} made, of ${f.callsOriginal} recorded)`,
    `diverged    ${diverged.length} session(s)${
      diverged.length
        ? `: ${diverged
            .slice(0, 5)
            .map((d) => `${d.sessionId.slice(0, 8)} at turn ${d.turn}`)
            .join(', ')}${diverged.length > 5 ? ', …' : ''}`
        : ''
    }`,
    `tokens      ${f.promptTokens} prompt, ${f.completionTokens} completion`,
    `time        ${seconds === null ? '–' : `${seconds.toFixed(1)} s`} wall, ${(f.latencyMs / 1000).toFixed(1)} s in model calls`,
  ];
  if (f.misses) lines.push(`misses      ${f.misses} tool call(s) not in the recording`);
  f.failures.forEach((failure, i) => {
    lines.push(formatFailure(failure, i > 0));
  });
  const shown = (JSON.parse(run.options) as { shown?: unknown }).shown;
  if (shown || f.elision.resultsElided > 0 || f.elision.resultsCut > 0) {
    lines.push(
      `elided      ${f.elision.resultsElided} repeated result(s) across the contexts sent, ${f.elision.resultsCut} cut to --max-result-bytes; ${formatBytes(f.elision.bytesSaved)} not sent` +
        (run.mode === 'free'
          ? `; the model asked again ${f.elision.reasks} time(s) for an elided result`
          : ''),
    );
  }
  return lines.join('\n');
}

/** `failed  30 × openai:x: HTTP 400: … (first: 6f1c2a34 turn 3)`: one line per distinct cause. */
function formatFailure(failure: FailureCause, continued = false): string {
  return `${continued ? '      ' : 'failed'}      ${failure.count} × ${failure.cause} (first: ${failure.first.sessionId.slice(0, 8)} turn ${failure.first.turn})`;
}

/** `runs [RUN_ID]`: every run with its figures, or one run with its side effects. */
export function listRuns(id: string | undefined, options: { db: string; json?: boolean }): void {
  const db = openDb(options.db, { readOnly: true });
  try {
    const store = new RunStore(db);
    if (id !== undefined) {
      showRun(store, id, options.json === true);
      return;
    }
    const rows: string[][] = [
      [
        'RUN',
        'MODEL',
        'MODE',
        'DRIVER',
        'STATUS',
        'TURNS',
        'FAILED',
        'EXACT',
        'PRECISION',
        'RECALL',
        'SIDE EFFECTS',
        'STARTED',
      ],
    ];
    const json: unknown[] = [];
    for (const run of [...store.list()].map(asItStands)) {
      const f = store.figures(run.id);
      const check = store.checkSummary(run.id);
      if (options.json) json.push({ ...runJson(run, f), sideEffects: check });
      else {
        rows.push([
          run.id,
          run.model,
          run.mode,
          run.driver,
          run.status,
          String(f.turnsDone),
          String(f.turnsFailed),
          String(f.matches.exact),
          percent(f.precision),
          percent(f.recall),
          sideEffectsCell(check),
          run.started_at.replace('T', ' ').slice(0, 16),
        ]);
      }
    }
    if (options.json) writeOut(JSON.stringify(json, null, 2));
    else if (rows.length === 1)
      process.stderr.write(
        'no runs yet; hint: replay-history replay --demo (or replay-history replay SESSION)\n',
      );
    else writeOut(table(rows));
  } finally {
    db.close();
  }
}

/** `runs check RUN_ID`: the run's figures judged by the gates given. */
export async function checkRun(
  id: string,
  options: GateFlags & { db: string; json?: boolean; junit?: string; report?: string },
): Promise<void> {
  const gates = gatesOf(options);
  if (!anyGate(gates))
    throw new UserError('runs check needs a gate', 'give one, e.g. --min-recall 95%, or --gates FILE');
  const db = openDb(options.db, { readOnly: true });
  try {
    checkReportFiles({
      junit: options.junit ? resolve(options.junit) : undefined,
      report: options.report ? resolve(options.report) : undefined,
      store: db,
      inputs: [['--gates', options.gates]],
    });
    const store = new RunStore(db);
    const run = asItStands(store.resolve(id));
    // Its figures cover only what it had done: 3 sessions of 100 at full recall would pass --min-recall 95%.
    if (run.status === 'running' || run.status === 'interrupted')
      throw new UserError(
        `run ${run.id} ${run.status === 'running' ? 'is still running' : 'did not finish'}${run.error ? ` (${run.error})` : ''}: its figures cover only what it had done, which no gate may judge`,
        run.status === 'running'
          ? 'check it once it has finished'
          : `finish it first: replay-history replay --resume ${run.id}`,
      );
    const figures = store.figures(run.id);
    const sessions = [...store.sessionFigures(run.id)];
    const verdicts = checkGates(gates, figures, sessions);
    const summary = store.checkSummary(run.id);
    const changes = summary.changes > 0 ? [...store.changes(run.id)] : [];
    if (options.json)
      writeOut(JSON.stringify({ ...runJson(run, figures), sideEffects: summary, gates: verdicts }, null, 2));
    else {
      writeOut(formatFigures(run, figures));
      if (summary.changes > 0)
        writeOut(
          `side effects ${summary.changes} under ${summary.roots.join(', ')} (runs ${run.id} lists them)`,
        );
      writeOut(formatGates(verdicts));
    }
    if (options.junit) {
      const file = resolve(options.junit);
      await writeVerdict(
        file,
        formatRunJunit({
          runId: run.id,
          startedAt: run.started_at,
          seconds: wallSeconds(run) ?? 0,
          sessions,
          verdicts,
          ...(summary.checks > 0
            ? {
                sideEffects: {
                  roots: summary.roots,
                  changes: changes.map((c) => ({
                    kind: c.kind,
                    path: c.path,
                    ...(c.from ? { from: c.from } : {}),
                  })),
                },
              }
            : {}),
        }),
      );
    }
    if (options.report || process.env.GITHUB_STEP_SUMMARY) {
      const markdown = formatRunMarkdown({
        run,
        figures,
        sessions,
        verdicts,
        ...(summary.checks > 0 ? { sideEffects: { changes: summary.changes, roots: summary.roots } } : {}),
        command: commandLine(),
      });
      if (options.report) {
        const file = resolve(options.report);
        await writeMarkdown(file, markdown);
        await writeHtml(
          file,
          formatRunHtml({
            run,
            figures,
            verdicts,
            sessions: reportSessions(store, new SessionStore(db), run.id, sessions),
            command: commandLine(),
            ...(summary.checks > 0
              ? {
                  sideEffects: {
                    roots: summary.roots,
                    changes: changes.map((c) => ({ kind: c.kind, path: c.path, layers: c.layers })),
                  },
                }
              : {}),
          }),
        );
      } else await writeMarkdown('', markdown, process.env, false);
    }
    if (summary.changes > 0) process.exitCode = ExitCode.sideEffects;
    else if (verdicts.some((verdict) => !verdict.passed)) process.exitCode = ExitCode.divergence;
  } finally {
    db.close();
  }
}

/** Misses listed by `runs RUN_ID`; the count covers the rest. */
const missesShown = 1000;

function showRun(store: RunStore, id: string, json: boolean): void {
  const run = asItStands(store.resolve(id));
  const figures = store.figures(run.id);
  const check = store.checkSummary(run.id);
  const changes = [...store.changes(run.id)];
  // Bounded: a run that missed on every call of thousands of sessions is summed up by its count.
  const misses: MissRecord[] = [];
  for (const miss of store.misses(run.id)) {
    if (misses.length === missesShown) break;
    misses.push(miss);
  }
  if (json) {
    writeOut(
      JSON.stringify(
        { ...runJson(run, figures), missList: misses, sideEffects: { ...check, list: changes } },
        null,
        2,
      ),
    );
    return;
  }
  const lines = [formatFigures(run, figures)];
  if (misses.length > 0) {
    lines.push(
      `misses${figures.misses > misses.length ? ` (first ${misses.length} of ${figures.misses})` : ''}:`,
    );
    for (const miss of misses) {
      const near = miss.nearest[0];
      lines.push(
        `  ${miss.sessionId.slice(0, 8)} turn ${miss.turn}  ${miss.call.name} ${JSON.stringify(miss.call.input)}${near ? ` · nearest ${near.name} ${JSON.stringify(near.input)}` : ''}`,
      );
    }
  }
  if (check.checks === 0) lines.push('side effects not checked (no directory was watched)');
  else if (changes.length === 0) lines.push(`side effects none under ${check.roots.join(', ')}`);
  else {
    lines.push(`side effects ${changes.length} under ${check.roots.join(', ')}:`);
    for (const c of changes) {
      const path = c.from ? `${c.from} → ${c.path}` : c.path;
      lines.push(
        `  ${c.kind}  ${path}${c.detail && !c.from ? ` · ${c.detail}` : ''} · ${c.layers.join('+')}${c.time ? ` ${c.time}` : ''}`,
      );
    }
  }
  writeOut(lines.join('\n'));
}
