import type { Command } from 'commander';
import { openDb } from '../../store/db.js';
import { type RunFigures, type RunRow, RunStore } from '../../store/runs.js';
import { table, writeOut } from '../output.js';
import { dbOption, jsonOption } from './options.js';

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

function wallSeconds(run: RunRow): number | null {
  if (!run.finished_at) return null;
  return (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
}

/** A run and its figures as machine output (`runs --json`, `replay --json`). */
export function runJson(run: RunRow, figures: RunFigures, seconds = wallSeconds(run)) {
  return {
    id: run.id,
    model: run.model,
    mode: run.mode,
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
    `run ${run.id}  ${run.model}  ${run.mode}  ${run.status}${run.error ? ` (${run.error})` : ''}`,
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
  return lines.join('\n');
}

export function registerRuns(program: Command): void {
  program
    .command('runs')
    .description('list replay runs with their figures')
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Figures per run: turns done and failed, how the model's tool calls compare with the original's (exact,
normalized, differ; precision and recall over calls), the first divergent turn of each session, tokens and
time.

Examples:
  $ replay-history runs
  $ replay-history runs --json`,
    )
    .action((options: { db: string; json?: boolean }) => {
      const db = openDb(options.db);
      try {
        const store = new RunStore(db);
        const rows: string[][] = [
          ['RUN', 'MODEL', 'MODE', 'STATUS', 'TURNS', 'FAILED', 'EXACT', 'PRECISION', 'RECALL', 'STARTED'],
        ];
        const json: unknown[] = [];
        for (const run of [...store.list()]) {
          const f = store.figures(run.id);
          if (options.json) json.push(runJson(run, f));
          else {
            rows.push([
              run.id,
              run.model,
              run.mode,
              run.status,
              String(f.turnsDone),
              String(f.turnsFailed),
              String(f.matches.exact),
              percent(f.precision),
              percent(f.recall),
              run.started_at.replace('T', ' ').slice(0, 16),
            ]);
          }
        }
        if (options.json) writeOut(JSON.stringify(json, null, 2));
        else if (rows.length === 1)
          process.stderr.write('no runs yet; hint: replay-history replay sample-sessions\n');
        else writeOut(table(rows));
      } finally {
        db.close();
      }
    });
}
