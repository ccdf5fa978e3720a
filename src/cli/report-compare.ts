// A comparison of two runs (`runs compare A B --report FILE`) as Markdown for CI pages (FILE.md, appended to
// $GITHUB_STEP_SUMMARY) and one self-contained HTML page (FILE.html): the gate first, the figures of both with
// their deltas, the sessions that regressed most, then every session with each turn that changed, linked by
// stable anchors (#session-<id>, #session-<id>-turn-<n>). Pure: data in, text out.
import type { SessionComparison, TurnComparison } from '../replay/compare.js';
import { version } from './version.js';

export interface FigureRow {
  name: string;
  baseline: string;
  candidate: string;
  delta: string;
}

export interface CompareReport {
  baseline: string;
  candidate: string;
  command: string;
  figures: FigureRow[];
  totals: { improved: number; regressed: number; same: number };
  gate?: { maxRegressions: number; passed: boolean };
  sessions: readonly SessionComparison[];
  onlyBaseline: readonly string[];
  onlyCandidate: readonly string[];
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function changed(turn: TurnComparison): string {
  const text =
    turn.textA !== undefined && turn.textB !== undefined
      ? ` (text ${turn.textA.toFixed(2)} → ${turn.textB.toFixed(2)})`
      : '';
  const misses = turn.missesA !== undefined ? `, misses ${turn.missesA} → ${turn.missesB}` : '';
  return `turn ${turn.turn} ${turn.a ?? '–'} → ${turn.b ?? '–'}${text}${misses}`;
}

const worst = (sessions: readonly SessionComparison[]) =>
  sessions
    .filter((s) => s.regressed > 0)
    .sort((x, y) => y.regressed - y.improved - (x.regressed - x.improved) || y.regressed - x.regressed);

function verdict(report: CompareReport): string {
  const { improved, regressed } = report.totals;
  const head = `${improved} turn(s) improved, ${regressed} regressed`;
  return report.gate && !report.gate.passed ? `gate failed: ${head}` : head;
}

export function formatCompareMarkdown(report: CompareReport): string {
  const lines = [
    `## replay-history: ${report.candidate} against ${report.baseline} — ${verdict(report)}`,
    '',
    `\`${cell(report.command)}\``,
    '',
    `replay-history ${version}`,
    '',
  ];
  if (report.gate)
    lines.push(
      `${report.gate.passed ? '✅' : '❌'} \`--max-regressions ${report.gate.maxRegressions}\`: ${report.totals.regressed} turn(s) regressed`,
      '',
    );
  lines.push('| | baseline | candidate | delta |', '|---|---|---|---|');
  for (const row of report.figures)
    lines.push(`| ${row.name} | ${row.baseline} | ${row.candidate} | ${row.delta} |`);
  lines.push('');
  const regressed = worst(report.sessions);
  if (regressed.length > 0) {
    lines.push('### Regressed most', '', '| session | regressed | improved | turns |', '|---|---|---|---|');
    for (const s of regressed.slice(0, 20))
      lines.push(
        `| \`${s.sessionId.slice(0, 12)}\` | ${s.regressed} | ${s.improved} | ${cell(
          s.turns
            .filter((t) => t.outcome === 'regressed')
            .slice(0, 3)
            .map(changed)
            .join('; '),
        )} |`,
      );
    if (regressed.length > 20) lines.push('', `… and ${regressed.length - 20} more session(s).`);
    lines.push('');
  }
  if (report.onlyBaseline.length > 0 || report.onlyCandidate.length > 0)
    lines.push(
      `Only in the baseline: ${report.onlyBaseline.map((id) => `\`${id.slice(0, 12)}\``).join(', ') || 'none'}. Only in the candidate: ${report.onlyCandidate.map((id) => `\`${id.slice(0, 12)}\``).join(', ') || 'none'}.`,
      '',
    );
  return lines.join('\n');
}

export function formatCompareHtml(report: CompareReport): string {
  const rows = (cells: string[][]) =>
    cells.map((row) => `<tr>${row.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  const mark = (outcome: string) =>
    outcome === 'regressed' ? 'regressed' : outcome === 'improved' ? 'improved' : '';
  const sessions = report.sessions
    .map((s) => {
      const turns = s.turns
        .filter((t) => t.outcome !== 'same')
        .map(
          (t) =>
            `<li id="session-${escapeHtml(s.sessionId)}-turn-${t.turn}" class="${mark(t.outcome)}">${escapeHtml(t.outcome)}: ${escapeHtml(changed(t))}</li>`,
        )
        .join('');
      return `<section id="session-${escapeHtml(s.sessionId)}"><h3><code>${escapeHtml(s.sessionId)}</code> · ${s.regressed} regressed, ${s.improved} improved, ${s.same} the same</h3>${turns ? `<ul>${turns}</ul>` : '<p>no turn changed</p>'}</section>`;
    })
    .join('');
  const only = (title: string, ids: readonly string[]) =>
    ids.length === 0
      ? ''
      : `<p>${title}: ${ids.map((id) => `<code>${escapeHtml(id)}</code>`).join(', ')}</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>replay-history ${escapeHtml(report.candidate)} against ${escapeHtml(report.baseline)}</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px 48px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px}.regressed{color:#b00020}.improved{color:#137333}h3{font-size:14px}code{font:12px ui-monospace,monospace}</style>
</head><body>
<h1>${escapeHtml(report.candidate)} against ${escapeHtml(report.baseline)}</h1>
<p id="verdict">${escapeHtml(verdict(report))}</p>
<p><code>${escapeHtml(report.command)}</code><br>replay-history ${escapeHtml(version)}</p>
<table id="figures"><tr><th></th><th>baseline</th><th>candidate</th><th>delta</th></tr>${rows(
    report.figures.map((row) => [
      escapeHtml(row.name),
      escapeHtml(row.baseline),
      escapeHtml(row.candidate),
      escapeHtml(row.delta),
    ]),
  )}</table>
<h2>Regressed most</h2><ul>${worst(report.sessions)
    .slice(0, 50)
    .map(
      (s) =>
        `<li><a href="#session-${escapeHtml(s.sessionId)}">${escapeHtml(s.sessionId.slice(0, 12))}</a> ${s.regressed} regressed, ${s.improved} improved</li>`,
    )
    .join('')}</ul>
${only('Only in the baseline', report.onlyBaseline)}${only('Only in the candidate', report.onlyCandidate)}
<h2>Sessions</h2>${sessions}
</body></html>
`;
}
