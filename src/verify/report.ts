import type { Report } from './check.js';
import type { Change } from './diff.js';

/** How the checked command ended. */
export interface Outcome {
  argv: string[];
  exitCode: number | null;
  signal: string | null;
  /** It could not be started at all. */
  error?: string;
}

export function failed(outcome: Outcome): boolean {
  return outcome.error !== undefined || outcome.signal !== null || outcome.exitCode !== 0;
}

export function describeOutcome(outcome: Outcome): string {
  if (outcome.error) return `could not start: ${outcome.error}`;
  if (outcome.signal) return `killed by ${outcome.signal}`;
  return `exited ${outcome.exitCode}`;
}

/** A path as short as it can be said: relative to its root when there is one root. */
function shown(path: string, roots: readonly string[]): string {
  if (roots.length !== 1) return path;
  const root = roots[0] as string;
  if (path === root) return '.';
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

/** Changes inside a created or deleted directory are counted under it rather than listed one by one. */
function grouped(changes: readonly Change[]): { change: Change; below: number }[] {
  const rows: { change: Change; below: number }[] = [];
  let open: { change: Change; below: number } | undefined;
  for (const change of changes) {
    if (
      open &&
      change.kind === open.change.kind &&
      change.path.startsWith(`${open.change.path}/`) &&
      change.layers.length === 1
    ) {
      open.below++;
      continue;
    }
    const row = { change, below: 0 };
    rows.push(row);
    open =
      (change.kind === 'created' || change.kind === 'deleted') && change.type === 'directory'
        ? row
        : undefined;
  }
  return rows;
}

const clock = (iso: string) => iso.slice(11, 23);

/** One line per change (those inside a created or deleted directory counted under it), at most `limit`. */
function changeLines(changes: readonly Change[], roots: readonly string[], limit: number): string[] {
  const lines: string[] = [];
  const rows = grouped(changes);
  const kindWidth = Math.max(0, ...rows.map((row) => row.change.kind.length));
  for (const { change, below } of rows.slice(0, limit)) {
    const path =
      change.kind === 'renamed' && change.from
        ? `${shown(change.from, roots)} → ${shown(change.path, roots)}`
        : shown(change.path, roots);
    const parts = [`  ${change.kind.padEnd(kindWidth)}  ${path}`];
    if (below > 0) parts.push(`(and ${below} below)`);
    if (change.detail && change.kind !== 'renamed') parts.push(`· ${change.detail}`);
    parts.push(`· ${change.layers.join('+')}${change.time ? ` ${clock(change.time)}` : ''}`);
    lines.push(parts.join(' '));
  }
  if (rows.length > limit) lines.push(`  … and ${rows.length - limit} more (--json lists every one)`);
  return lines;
}

/** The human report: one line per change, then what was checked, then what other processes changed. */
export function formatReport(report: Report, limit = 200): string {
  const where = report.roots.join(', ');
  const lines = changeLines(report.changes, report.roots, limit);
  const seconds = ((report.manifest.beforeMs + report.manifest.afterMs) / 1000).toFixed(2);
  const watcher =
    report.watcher.backend === 'none'
      ? 'no watcher (--no-watcher)'
      : `watcher ${report.watcher.events} events`;
  const checked = `${report.manifest.after} entries, manifest ${seconds} s, ${watcher}`;
  lines.unshift(
    report.changes.length === 0
      ? `no changes under ${where} (${checked})`
      : `${report.changes.length} change${report.changes.length === 1 ? '' : 's'} under ${where} (${checked}):`,
  );
  for (const error of report.watcher.errors)
    lines.push(`watcher failed: ${error} (the manifest verdict stands)`);
  if (report.watcher.missed > 0)
    lines.push(
      `the watcher did not see ${report.watcher.missed} of these (a write through a hard link from outside, a ` +
        'directory made faster than its watch, or a full event queue): the manifest found them',
    );
  if (report.gaps.length > 0) {
    const sample = report.gaps
      .slice(0, 5)
      .map((gap) => `${shown(gap.path, report.roots)} (${gap.reason})`)
      .join(', ');
    lines.push(
      `not checked: ${report.gaps.length} entr${report.gaps.length === 1 ? 'y' : 'ies'} could not be read: ${sample}${report.gaps.length > 5 ? ', …' : ''}`,
    );
  }
  if (report.others.length > 0) {
    const count = `${report.others.length} change${report.others.length === 1 ? '' : 's'}`;
    lines.push(`${count} by another process, not the replay's (not counted):`);
    lines.push(...changeLines(report.others, report.roots, limit));
  }
  return lines.join('\n');
}

export function escapeXml(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      // XML 1.0 cannot carry most control characters at all, escaped or not.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '\uFFFD')
  );
}

/**
 * JUnit XML as CI systems read it (Jenkins, GitLab, GitHub test reporters): one test case per watched root,
 * failed when anything under it changed, and one for the command itself.
 */
export function formatJunit(report: Report, outcome: Outcome, seconds: number): string {
  const cases: string[] = [];
  let failures = 0;
  for (const root of report.roots) {
    const changes = report.changes.filter((c) => c.path === root || c.path.startsWith(`${root}/`));
    const name = `no side effects under ${root}`;
    if (changes.length === 0) {
      cases.push(`    <testcase classname="replay-history.verify" name="${escapeXml(name)}"/>`);
      continue;
    }
    failures++;
    const body = changes
      .map((c) => `${c.kind}: ${c.from ? `${c.from} → ` : ''}${c.path}${c.detail ? ` (${c.detail})` : ''}`)
      .join('\n');
    cases.push(
      `    <testcase classname="replay-history.verify" name="${escapeXml(name)}">\n` +
        `      <failure type="side-effects" message="${changes.length} change${changes.length === 1 ? '' : 's'}">${escapeXml(body)}</failure>\n` +
        '    </testcase>',
    );
  }
  const command = `command: ${outcome.argv.join(' ')}`;
  if (failed(outcome)) {
    failures++;
    cases.push(
      `    <testcase classname="replay-history.verify" name="${escapeXml(command)}">\n` +
        `      <failure type="command-failed" message="${escapeXml(describeOutcome(outcome))}"/>\n` +
        '    </testcase>',
    );
  } else cases.push(`    <testcase classname="replay-history.verify" name="${escapeXml(command)}"/>`);
  const notes = [
    ...report.watcher.errors.map((e) => `watcher failed: ${e}`),
    ...(report.watcher.missed > 0
      ? [`watcher missed ${report.watcher.missed} changes the manifest found`]
      : []),
    ...report.gaps.map((gap) => `not checked: ${gap.path} (${gap.reason})`),
    ...report.others.map((c) => `changed by another process, not counted: ${c.kind}: ${c.path}`),
  ];
  const tests = cases.length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="replay-history verify" tests="${tests}" failures="${failures}" errors="0" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="replay-history verify" tests="${tests}" failures="${failures}" errors="0" skipped="0" time="${seconds.toFixed(3)}" timestamp="${report.startedAt.slice(0, 19)}">`,
    ...cases,
    ...(notes.length > 0 ? [`    <system-err>${escapeXml(notes.join('\n'))}</system-err>`] : []),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
