// Gates: what turns a run's figures into a CI verdict. Each gate is a threshold on a figure the run already
// has — tool-call recall and precision, the share of sessions that diverged, misses, failed turns, how early a
// session first diverged — and, failed, names the figure, the threshold and the sessions that made it fail.
// Pure: the figures come in, the verdicts go out.
import type { RunFigures, SessionFigures } from '../store/runs.js';

export interface Gates {
  /** Of the recorded calls, the share the model made too, at least (0–1). */
  minRecall?: number;
  /** Of the calls the model made, the share the recording has, at least (0–1). */
  minPrecision?: number;
  /** Of the sessions, the share that diverged (a turn's calls differ, or --on-miss stop ended it), at most. */
  maxDiverged?: number;
  /** Calls the recording does not hold, at most. */
  maxMisses?: number;
  /** Turns that got no answer, at most. */
  maxFailedTurns?: number;
  /** No session may diverge before this turn (its first differing turn is this one or later). */
  divergeAfter?: number;
}

/** The gates by their option names, in the order they are checked and said. */
export const gateOptions = {
  minRecall: '--min-recall',
  minPrecision: '--min-precision',
  maxDiverged: '--max-diverged',
  maxMisses: '--max-misses',
  maxFailedTurns: '--max-failed-turns',
  divergeAfter: '--diverge-after',
} as const satisfies Record<keyof Gates, string>;

export type GateName = keyof Gates;

export interface GateVerdict {
  gate: GateName;
  /** The option that sets it (`--min-recall`). */
  option: string;
  passed: boolean;
  /** The run's figure, and the threshold it was held to (as the option takes it). */
  figure: number | null;
  threshold: number;
  /** What the figure is, for people: `recall 82.0% (41 of 50 recorded calls made)`. */
  said: string;
  /** The sessions that made it fail, worst first (none when it passed). */
  sessions: { sessionId: string; why: string }[];
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** A session diverged: a turn's calls differ from the original's, or the replay stopped at a miss. */
export function diverged(session: SessionFigures): boolean {
  return session.firstDivergence !== null || session.status === 'diverged';
}

/** The verdict of each gate that is set, in `gateOptions` order. */
export function checkGates(
  gates: Gates,
  run: RunFigures,
  sessions: readonly SessionFigures[],
): GateVerdict[] {
  const verdicts: GateVerdict[] = [];
  const add = (
    gate: GateName,
    figure: number | null,
    passed: boolean,
    said: string,
    culprits: () => { sessionId: string; why: string }[],
  ) => {
    const threshold = gates[gate] as number;
    verdicts.push({
      gate,
      option: gateOptions[gate],
      passed,
      figure,
      threshold,
      said,
      sessions: passed ? [] : culprits(),
    });
  };
  const share = (part: number, whole: number) => (whole === 0 ? null : part / whole);
  if (gates.minRecall !== undefined) {
    // No recorded call to make: nothing was missed.
    const recall = run.recall;
    add(
      'minRecall',
      recall,
      recall === null || recall >= gates.minRecall,
      recall === null
        ? 'recall – (the recording has no calls)'
        : `recall ${percent(recall)} (${run.callsMatched} of ${run.callsOriginal} recorded calls made)`,
      () =>
        sessions
          .filter((s) => s.callsOriginal > 0 && s.callsMatched < s.callsOriginal)
          .sort((a, b) => a.callsMatched / a.callsOriginal - b.callsMatched / b.callsOriginal)
          .map((s) => ({
            sessionId: s.sessionId,
            why: `${s.callsMatched} of ${s.callsOriginal} recorded calls made`,
          })),
    );
  }
  if (gates.minPrecision !== undefined) {
    const precision = run.precision;
    add(
      'minPrecision',
      precision,
      precision === null || precision >= gates.minPrecision,
      precision === null
        ? 'precision – (the model made no call)'
        : `precision ${percent(precision)} (${run.callsMatched} of ${run.callsPredicted} calls made are recorded)`,
      () =>
        sessions
          .filter((s) => s.callsPredicted > 0 && s.callsMatched < s.callsPredicted)
          .sort((a, b) => a.callsMatched / a.callsPredicted - b.callsMatched / b.callsPredicted)
          .map((s) => ({
            sessionId: s.sessionId,
            why: `${s.callsPredicted - s.callsMatched} of ${s.callsPredicted} calls made not recorded`,
          })),
    );
  }
  if (gates.maxDiverged !== undefined) {
    const off = sessions.filter(diverged);
    const part = share(off.length, sessions.length);
    add(
      'maxDiverged',
      part,
      part === null || part <= gates.maxDiverged,
      `${off.length} of ${sessions.length} session(s) diverged${part === null ? '' : ` (${percent(part)})`}`,
      () =>
        [...off]
          .sort((a, b) => (a.firstDivergence ?? Infinity) - (b.firstDivergence ?? Infinity))
          .map((s) => ({ sessionId: s.sessionId, why: divergedAt(s) })),
    );
  }
  if (gates.maxMisses !== undefined)
    add(
      'maxMisses',
      run.misses,
      run.misses <= gates.maxMisses,
      `${run.misses} call(s) not in the recording`,
      () =>
        sessions
          .filter((s) => s.misses > 0)
          .sort((a, b) => b.misses - a.misses)
          .map((s) => ({ sessionId: s.sessionId, why: `${s.misses} miss(es)` })),
    );
  if (gates.maxFailedTurns !== undefined)
    add(
      'maxFailedTurns',
      run.turnsFailed,
      run.turnsFailed <= gates.maxFailedTurns,
      `${run.turnsFailed} failed turn(s)`,
      () =>
        sessions
          .filter((s) => s.turnsFailed > 0)
          .sort((a, b) => b.turnsFailed - a.turnsFailed)
          .map((s) => ({ sessionId: s.sessionId, why: `${s.turnsFailed} failed turn(s)` })),
    );
  if (gates.divergeAfter !== undefined) {
    const after = gates.divergeAfter;
    const early = sessions.filter((s) => s.firstDivergence !== null && s.firstDivergence < after);
    const earliest = sessions.reduce<number | null>(
      (min, s) => (s.firstDivergence === null ? min : Math.min(min ?? Infinity, s.firstDivergence)),
      null,
    );
    add(
      'divergeAfter',
      earliest,
      early.length === 0,
      earliest === null ? 'no session diverged' : `the earliest divergence is at turn ${earliest}`,
      () =>
        [...early]
          .sort((a, b) => (a.firstDivergence as number) - (b.firstDivergence as number))
          .map((s) => ({ sessionId: s.sessionId, why: divergedAt(s) })),
    );
  }
  return verdicts;
}

function divergedAt(session: SessionFigures): string {
  if (session.firstDivergence !== null) return `diverged at turn ${session.firstDivergence}`;
  return 'stopped at a call not in the recording (--on-miss stop)';
}

/** How a threshold reads: a share as a percentage, a count or a turn as it is. */
export function thresholdText(gate: GateName, value: number): string {
  return gate === 'minRecall' || gate === 'minPrecision' || gate === 'maxDiverged'
    ? percent(value)
    : String(value);
}

/** The verdicts for people: one line each, a failed one with its sessions (the first few). */
export function formatGates(verdicts: readonly GateVerdict[], shown = 5): string {
  const failed = verdicts.filter((verdict) => !verdict.passed);
  const lines = [
    `gates       ${verdicts.length - failed.length} passed, ${failed.length} failed${failed.length ? ' (exit 4)' : ''}`,
  ];
  // The failed ones first: they are what a CI log reader looks for.
  for (const verdict of [...failed, ...verdicts.filter((v) => v.passed)]) {
    lines.push(
      `  ${verdict.passed ? 'passed' : 'FAILED'} ${verdict.option} ${thresholdText(verdict.gate, verdict.threshold)}: ${verdict.said}`,
    );
    for (const session of verdict.sessions.slice(0, shown))
      lines.push(`           ${session.sessionId.slice(0, 12)}  ${session.why}`);
    if (verdict.sessions.length > shown)
      lines.push(`           … and ${verdict.sessions.length - shown} more session(s)`);
  }
  return lines.join('\n');
}
