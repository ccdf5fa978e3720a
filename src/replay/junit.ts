// A run as JUnit XML, for CI test reporters (Jenkins, GitLab, GitHub): one test case per session — failed when a
// failed gate names it (with the gate, its figure and why the session counts) or a turn of it got no answer —
// and one for side effects, as `verify --junit` has. Pure.
import type { SessionFigures } from '../store/runs.js';
import { escapeXml } from '../verify/report.js';
import { type GateVerdict, thresholdText } from './gates.js';

export interface RunJunit {
  runId: string;
  startedAt: string;
  seconds: number;
  sessions: readonly SessionFigures[];
  verdicts: readonly GateVerdict[];
  /** What the checker found; undefined when no directory was watched. */
  sideEffects?: {
    roots: readonly string[];
    changes: readonly { kind: string; path: string; from?: string }[];
  };
}

export function formatRunJunit(run: RunJunit): string {
  const cases: string[] = [];
  let failures = 0;
  const suite = 'replay-history.replay';
  for (const session of run.sessions) {
    const reasons = run.verdicts.flatMap((verdict) =>
      verdict.sessions
        .filter((named) => named.sessionId === session.sessionId)
        .map(
          (named) =>
            `${verdict.option} ${thresholdText(verdict.gate, verdict.threshold)} failed (${verdict.said}): ${named.why}`,
        ),
    );
    if (session.turnsFailed > 0 && !reasons.some((reason) => reason.includes('failed turn')))
      reasons.push(`${session.turnsFailed} turn(s) got no answer`);
    const name = `session ${session.sessionId}`;
    if (reasons.length === 0) {
      cases.push(`    <testcase classname="${suite}" name="${escapeXml(name)}"/>`);
      continue;
    }
    failures++;
    cases.push(
      `    <testcase classname="${suite}" name="${escapeXml(name)}">\n` +
        `      <failure type="${session.turnsFailed > 0 && reasons.length === 1 ? 'failed-turns' : 'gate'}" message="${escapeXml(reasons[0] as string)}">${escapeXml(reasons.join('\n'))}</failure>\n` +
        '    </testcase>',
    );
  }
  if (run.sideEffects) {
    const name = `no side effects under ${run.sideEffects.roots.join(', ') || '(nothing watched)'}`;
    const changes = run.sideEffects.changes;
    if (changes.length === 0) cases.push(`    <testcase classname="${suite}" name="${escapeXml(name)}"/>`);
    else {
      failures++;
      const body = changes.map((c) => `${c.kind}: ${c.from ? `${c.from} → ` : ''}${c.path}`).join('\n');
      cases.push(
        `    <testcase classname="${suite}" name="${escapeXml(name)}">\n` +
          `      <failure type="side-effects" message="${changes.length} change${changes.length === 1 ? '' : 's'}">${escapeXml(body)}</failure>\n` +
          '    </testcase>',
      );
    }
  }
  const tests = cases.length;
  const title = `replay-history replay ${run.runId}`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(title)}" tests="${tests}" failures="${failures}" errors="0" time="${run.seconds.toFixed(3)}">`,
    `  <testsuite name="${escapeXml(title)}" tests="${tests}" failures="${failures}" errors="0" skipped="0" time="${run.seconds.toFixed(3)}" timestamp="${run.startedAt.slice(0, 19)}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
