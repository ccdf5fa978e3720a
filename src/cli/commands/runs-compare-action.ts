// `runs compare A B`: a baseline run and a candidate over the same sessions, turn by turn — which turns improved
// and which regressed (replay/compare.ts), the figures of both with their deltas, the sessions that regressed
// most, and the sessions only one run holds — and a gate on regressions (exit 4). Loaded by the command's action
// only (runs-compare.ts registers it).
import { resolve } from 'node:path';
import { turns } from '../../model/turns.js';
import { assistantMessage } from '../../replay/chat.js';
import { compareSession, type SessionComparison, type TurnComparison } from '../../replay/compare.js';
import { openDb } from '../../store/db.js';
import { type RunFigures, RunStore } from '../../store/runs.js';
import { SessionStore } from '../../store/sessions.js';
import { ExitCode } from '../errors.js';
import { table, writeOut } from '../output.js';
import { commandLine, writeHtml, writeMarkdown } from '../report.js';
import { type CompareReport, formatCompareHtml, formatCompareMarkdown } from '../report-compare.js';
import { checkReportFiles } from '../report-files.js';

/** The figures compared, as `A`, `B` and B − A. */
const compared = (f: RunFigures) => ({
  recall: f.recall,
  precision: f.precision,
  exactTurns: f.matches.exact,
  differingTurns: f.matches.differs,
  divergedSessions: f.firstDivergence.filter((d) => d.turn !== null).length,
  misses: f.misses,
  failedTurns: f.turnsFailed,
});
type Compared = ReturnType<typeof compared>;

function delta(a: Compared, b: Compared): Record<keyof Compared, number | null> {
  const out = {} as Record<keyof Compared, number | null>;
  for (const key of Object.keys(a) as (keyof Compared)[]) {
    const x = a[key];
    const y = b[key];
    out[key] = x === null || y === null ? null : y - x;
  }
  return out;
}

/** Sessions shown per list for people; --json has them all. */
const listed = 10;

function turnText(turn: TurnComparison): string {
  const text =
    turn.textA !== undefined && turn.textB !== undefined
      ? ` (text ${turn.textA.toFixed(2)} → ${turn.textB.toFixed(2)})`
      : '';
  const misses = turn.missesA !== undefined ? `, misses ${turn.missesA} → ${turn.missesB}` : '';
  return `turn ${turn.turn} ${turn.a} → ${turn.b}${text}${misses}`;
}

/** `runs compare A B`: the comparison, its report and its gate. */
export async function compareRuns(
  first: string,
  second: string,
  options: { db: string; json?: boolean; maxRegressions?: number; report?: string },
): Promise<void> {
  const db = openDb(options.db, { readOnly: true });
  try {
    checkReportFiles({ report: options.report ? resolve(options.report) : undefined, store: db });
    const store = new RunStore(db);
    const sessions = new SessionStore(db);
    const a = store.resolve(first);
    const b = store.resolve(second);
    const inA = store.sessions(a.id);
    const inB = new Set(store.sessions(b.id));
    const both = inA.filter((id) => inB.has(id));
    const onlyA = inA.filter((id) => !inB.has(id));
    const inASet = new Set(inA);
    const onlyB = [...inB].filter((id) => !inASet.has(id));
    // One session at a time: memory stays that of the largest session, not of the run.
    const results: SessionComparison[] = [];
    for (const id of both) {
      const loaded = sessions.load(id);
      const recorded = loaded ? [...turns(loaded.session.messages, loaded.own)] : [];
      const original = (turn: number) => {
        const response = recorded[turn - 1]?.response;
        if (!response) return undefined;
        const content = assistantMessage(response).content;
        return typeof content === 'string' ? content : '';
      };
      results.push(compareSession(id, store.turnRows(a.id, id), store.turnRows(b.id, id), original));
    }
    const sum = (key: 'improved' | 'regressed' | 'same' | 'onlyA' | 'onlyB') =>
      results.reduce((n, s) => n + s[key], 0);
    const figuresA = compared(store.figures(a.id));
    const figuresB = compared(store.figures(b.id));
    const regressedMost = results
      .filter((s) => s.regressed > 0)
      .sort((x, y) => y.regressed - y.improved - (x.regressed - x.improved) || y.regressed - x.regressed);
    const improvedMost = results
      .filter((s) => s.improved > 0)
      .sort((x, y) => y.improved - y.regressed - (x.improved - x.regressed));
    const gate =
      options.maxRegressions === undefined
        ? undefined
        : {
            maxRegressions: options.maxRegressions,
            passed: sum('regressed') <= options.maxRegressions,
          };
    if (options.json) {
      writeOut(
        JSON.stringify(
          {
            baseline: a.id,
            candidate: b.id,
            sessions: both.length,
            turns: {
              improved: sum('improved'),
              regressed: sum('regressed'),
              same: sum('same'),
              onlyBaseline: sum('onlyA'),
              onlyCandidate: sum('onlyB'),
            },
            figures: { baseline: figuresA, candidate: figuresB, delta: delta(figuresA, figuresB) },
            regressedMost: regressedMost.map((s) => s.sessionId),
            onlyBaseline: onlyA,
            onlyCandidate: onlyB,
            ...(gate ? { gate } : {}),
            perSession: results,
          },
          null,
          2,
        ),
      );
    } else {
      const share = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
      const signed = (x: number | null, percent = false) =>
        x === null ? '–' : `${x > 0 ? '+' : ''}${percent ? (x * 100).toFixed(1) : x}`;
      const d = delta(figuresA, figuresB);
      const lines = [
        `compare ${a.id} (baseline) → ${b.id} (candidate): ${both.length} session(s) in both`,
        table([
          ['', 'BASELINE', 'CANDIDATE', 'DELTA'],
          ['recall', share(figuresA.recall), share(figuresB.recall), signed(d.recall, true)],
          ['precision', share(figuresA.precision), share(figuresB.precision), signed(d.precision, true)],
          ['exact turns', String(figuresA.exactTurns), String(figuresB.exactTurns), signed(d.exactTurns)],
          [
            'diverged sessions',
            String(figuresA.divergedSessions),
            String(figuresB.divergedSessions),
            signed(d.divergedSessions),
          ],
          ['misses', String(figuresA.misses), String(figuresB.misses), signed(d.misses)],
          ['failed turns', String(figuresA.failedTurns), String(figuresB.failedTurns), signed(d.failedTurns)],
        ]),
        `turns       ${sum('improved')} improved, ${sum('regressed')} regressed, ${sum('same')} the same${
          sum('onlyA') + sum('onlyB') > 0
            ? `, ${sum('onlyA')} only in the baseline, ${sum('onlyB')} only in the candidate`
            : ''
        }`,
      ];
      const sessionLines = (title: string, list: SessionComparison[], outcome: 'regressed' | 'improved') => {
        if (list.length === 0) return;
        lines.push(`${title}:`);
        for (const s of list.slice(0, listed))
          lines.push(
            `  ${s.sessionId.slice(0, 12)}  ${s.regressed} regressed, ${s.improved} improved: ${s.turns
              .filter((turn) => turn.outcome === outcome)
              .slice(0, 3)
              .map(turnText)
              .join('; ')}`,
          );
        if (list.length > listed) lines.push(`  … and ${list.length - listed} more`);
      };
      sessionLines('regressed most', regressedMost, 'regressed');
      sessionLines('improved most', improvedMost, 'improved');
      if (onlyA.length > 0)
        lines.push(`only in the baseline: ${onlyA.map((id) => id.slice(0, 12)).join(', ')}`);
      if (onlyB.length > 0)
        lines.push(`only in the candidate: ${onlyB.map((id) => id.slice(0, 12)).join(', ')}`);
      if (gate)
        lines.push(
          `gate        --max-regressions ${gate.maxRegressions}: ${sum('regressed')} turn(s) regressed, ${gate.passed ? 'passed' : 'FAILED (exit 4)'}`,
        );
      writeOut(lines.join('\n'));
    }
    if (options.report || process.env.GITHUB_STEP_SUMMARY) {
      const share = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
      const signed = (x: number | null, percent = false) =>
        x === null ? '–' : `${x > 0 ? '+' : ''}${percent ? (x * 100).toFixed(1) : x}`;
      const d = delta(figuresA, figuresB);
      const report: CompareReport = {
        baseline: a.id,
        candidate: b.id,
        command: commandLine(),
        figures: [
          {
            name: 'recall',
            baseline: share(figuresA.recall),
            candidate: share(figuresB.recall),
            delta: signed(d.recall, true),
          },
          {
            name: 'precision',
            baseline: share(figuresA.precision),
            candidate: share(figuresB.precision),
            delta: signed(d.precision, true),
          },
          ...(['exactTurns', 'divergedSessions', 'misses', 'failedTurns'] as const).map((key) => ({
            name: {
              exactTurns: 'exact turns',
              divergedSessions: 'diverged sessions',
              misses: 'misses',
              failedTurns: 'failed turns',
            }[key],
            baseline: String(figuresA[key]),
            candidate: String(figuresB[key]),
            delta: signed(d[key]),
          })),
        ],
        totals: { improved: sum('improved'), regressed: sum('regressed'), same: sum('same') },
        ...(gate ? { gate } : {}),
        sessions: results,
        onlyBaseline: onlyA,
        onlyCandidate: onlyB,
      };
      const markdown = formatCompareMarkdown(report);
      if (options.report) {
        const file = resolve(options.report);
        await writeMarkdown(file, markdown);
        await writeHtml(file, formatCompareHtml(report));
      } else await writeMarkdown('', markdown, process.env, false);
    }
    if (gate && !gate.passed) process.exitCode = ExitCode.divergence;
  } finally {
    db.close();
  }
}
