// A run's report as one self-contained HTML file: no network, no CDN, opens from file://. At the top what a CI
// reader needs (the verdict, the command and versions, the gates failed first, the figures, side effects, a plot
// of the turn where sessions first diverged), then every session in a table; a session's turns — the original
// and the replayed answer side by side, the text difference and the tool-call difference highlighted, misses
// with the nearest recorded calls and the fields that differ, a failed turn's cause — are rendered by a small
// inline script from the data embedded in the page, only when the session is opened (`#session-<id>`), so a
// report of thousands of sessions stays light for the browser. Pure: data in, text out.
import type { GateVerdict } from '../replay/gates.js';
import { diverged, thresholdText } from '../replay/gates.js';
import type { MissRecord, RunFigures, RunRow, SessionFigures } from '../store/runs.js';
import { version } from './version.js';

/** One call as the report shows it. */
export interface ShownCall {
  name: string;
  args: string;
}

export interface ReportTurn {
  turn: number;
  /** exact, normalized, differs, none, or failed. */
  match: string;
  original?: { text: string; calls: ShownCall[] };
  replayed?: { text: string; calls: ShownCall[] };
  misses: Pick<MissRecord, 'call' | 'nearest'>[];
  error?: string;
}

export interface ReportSession {
  figures: SessionFigures;
  turns: ReportTurn[];
}

export interface HtmlReport {
  run: RunRow;
  figures: RunFigures;
  verdicts: readonly GateVerdict[];
  sessions: readonly ReportSession[];
  command: string;
  sideEffects?: {
    roots: readonly string[];
    changes: readonly { kind: string; path: string; layers?: readonly string[] }[];
  };
}

/** Texts longer than this are cut in the page (the pairs file has them whole). */
export const shownChars = 4000;

const cut = (text: string) =>
  text.length > shownChars
    ? `${text.slice(0, shownChars)}… [${text.length - shownChars} more characters in the pairs file]`
    : text;

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const percent = (share: number | null) => (share === null ? '–' : `${(share * 100).toFixed(1)}%`);

/** Embedded JSON that cannot end the script element it sits in. */
const embedded = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** The plot: how many sessions first diverged at each turn, as bars (inline SVG, no script needed). */
export function divergencePlot(sessions: readonly SessionFigures[]): string {
  const at = new Map<number, number>();
  for (const s of sessions)
    if (s.firstDivergence !== null) at.set(s.firstDivergence, (at.get(s.firstDivergence) ?? 0) + 1);
  const turns = [...at.keys()];
  const last = Math.max(1, ...turns);
  const most = Math.max(1, ...at.values());
  const width = 640;
  const height = 180;
  const pad = 30;
  const bar = (width - 2 * pad) / last;
  const bars = [...at.entries()]
    .map(([turn, count]) => {
      const h = ((height - 2 * pad) * count) / most;
      return `<rect class="bar" data-turn="${turn}" x="${(pad + (turn - 1) * bar + 1).toFixed(1)}" y="${(height - pad - h).toFixed(1)}" width="${Math.max(1, bar - 2).toFixed(1)}" height="${h.toFixed(1)}"><title>turn ${turn}: ${count} session(s)</title></rect>`;
    })
    .join('');
  const ticks = Array.from({ length: Math.min(last, 20) }, (_, i) =>
    Math.round(((i + 1) * last) / Math.min(last, 20)),
  )
    .map(
      (turn) =>
        `<text x="${(pad + (turn - 0.5) * bar).toFixed(1)}" y="${height - pad + 14}" text-anchor="middle">${turn}</text>`,
    )
    .join('');
  const none =
    turns.length === 0
      ? `<text x="${width / 2}" y="${height / 2}" text-anchor="middle">no session diverged</text>`
      : '';
  return `<svg id="plot" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="sessions by the turn where they first diverged"><line x1="${pad}" y1="${height - pad}" x2="${width - pad}" y2="${height - pad}" class="axis"/><text x="${width / 2}" y="${height - 4}" text-anchor="middle">turn of the first divergence</text><text x="4" y="${pad - 8}">${most} session(s)</text>${bars}${ticks}${none}</svg>`;
}

const style = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 48px;color:#1b1b1b}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}code{font:12px ui-monospace,monospace}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.failed{color:#b00020;font-weight:600}.passed{color:#137333}
.verdict{padding:6px 10px;border-radius:4px;display:inline-block}.bad{background:#fde7e9}.good{background:#e6f4ea}
#plot .bar{fill:#4a6fa5}#plot .axis{stroke:#888}#plot text{font-size:11px;fill:#444}
.side{display:grid;grid-template-columns:1fr 1fr;gap:8px}.side>div{border:1px solid #ddd;padding:6px;overflow:auto}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px ui-monospace,monospace}
ins{background:#d2f4d3;text-decoration:none}del{background:#fcd9dc}
.turn{border-top:2px solid #eee;margin-top:12px;padding-top:6px}.miss{background:#fff6e0;padding:4px 6px;margin:4px 0}
`;

/**
 * The inline script: renders the session named by the location's hash from the embedded data, with a word
 * diff (longest common subsequence) of the two answers and the calls compared by name and arguments.
 */
const script = `
const data = JSON.parse(document.getElementById('data').textContent);
const esc = (t) => String(t).replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;');
function diff(a, b) {
  const x = a.split(/(\\s+)/), y = b.split(/(\\s+)/);
  if (x.length * y.length > 4e6) return ['<pre>' + esc(a) + '</pre>', '<pre>' + esc(b) + '</pre>'];
  const n = x.length, m = y.length, t = Array.from({length: n + 1}, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    t[i][j] = x[i] === y[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  let i = 0, j = 0, l = '', r = '';
  while (i < n && j < m) {
    if (x[i] === y[j]) { l += esc(x[i]); r += esc(y[j]); i++; j++; }
    else if (t[i + 1][j] >= t[i][j + 1]) { l += '<del>' + esc(x[i++]) + '</del>'; }
    else { r += '<ins>' + esc(y[j++]) + '</ins>'; }
  }
  while (i < n) l += '<del>' + esc(x[i++]) + '</del>';
  while (j < m) r += '<ins>' + esc(y[j++]) + '</ins>';
  return ['<pre>' + l + '</pre>', '<pre>' + r + '</pre>'];
}
function calls(own, other, mark) {
  const keys = new Set(other.map((c) => c.name + '\\0' + c.args));
  return own.map((c) => {
    const same = keys.has(c.name + '\\0' + c.args);
    const near = other.find((o) => o.name === c.name);
    const label = same ? esc(c.name) : near ? esc(c.name) : '<' + mark + '>' + esc(c.name) + '</' + mark + '>';
    const args = same ? esc(c.args) : '<' + mark + '>' + esc(c.args) + '</' + mark + '>';
    return '<pre>' + label + ' ' + args + '</pre>';
  }).join('');
}
function side(turn) {
  const o = turn.original || {text: '', calls: []}, r = turn.replayed || {text: '', calls: []};
  const [dl, dr] = diff(o.text, r.text);
  return '<div class="side"><div><b>original</b>' + dl + calls(o.calls, r.calls, 'del') + '</div>' +
    '<div><b>replayed</b>' + (turn.error ? '<p class="failed">failed: ' + esc(turn.error) + '</p>' : dr + calls(r.calls, o.calls, 'ins')) + '</div></div>';
}
function misses(turn) {
  return turn.misses.map((m) => '<div class="miss">miss: <code>' + esc(m.call.name + ' ' + JSON.stringify(m.call.input)) + '</code>' +
    (m.nearest.length ? '<br>nearest: ' + m.nearest.map((n) => '<code>' + esc(n.name + ' ' + JSON.stringify(n.input)) + '</code> (differs: ' + esc(n.differs.join(', ')) + ')').join('; ') : '') + '</div>').join('');
}
function show() {
  const target = document.getElementById('detail');
  const id = decodeURIComponent(location.hash.replace(/^#session-/, '').replace(/-turn-\\d+$/, ''));
  const session = data.sessions.find((s) => s.figures.sessionId === id);
  if (!session) { target.innerHTML = ''; return; }
  target.innerHTML = '<h2 id="shown">Session <code>' + esc(id) + '</code></h2>' +
    session.turns.map((t) => '<div class="turn" id="session-' + esc(id) + '-turn-' + t.turn + '"><b>turn ' + t.turn + '</b> · ' + esc(t.match) + side(t) + misses(t) + '</div>').join('');
  const turn = /-turn-(\\d+)$/.exec(location.hash);
  (turn ? document.getElementById('session-' + id + '-turn-' + turn[1]) : target).scrollIntoView();
}
window.addEventListener('hashchange', show);
show();
`;

export function formatRunHtml(report: HtmlReport): string {
  const { run, figures: f, verdicts } = report;
  const failed = verdicts.filter((v) => !v.passed);
  const effects = report.sideEffects?.changes.length ?? 0;
  const ok = failed.length === 0 && effects === 0 && f.turnsFailed === 0;
  const verdict =
    effects > 0
      ? `side effects (${effects})`
      : failed.length > 0
        ? `${failed.length} gate(s) failed`
        : f.turnsFailed > 0
          ? `${f.turnsFailed} turn(s) failed`
          : 'passed';
  const options = JSON.parse(run.options) as { driver?: string };
  const rows = (cells: string[][]) =>
    cells.map((row) => `<tr>${row.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  const gates =
    verdicts.length === 0
      ? ''
      : `<h2>Gates</h2><table id="gates"><tr><th></th><th>gate</th><th>threshold</th><th>figure</th><th>sessions</th></tr>${rows(
          [...failed, ...verdicts.filter((v) => v.passed)].map((v) => [
            v.passed ? '<span class="passed">passed</span>' : '<span class="failed">FAILED</span>',
            `<code>${escapeHtml(v.option)}</code>`,
            escapeHtml(thresholdText(v.gate, v.threshold)),
            escapeHtml(v.said),
            v.sessions
              .slice(0, 10)
              .map(
                (s) =>
                  `<a href="#session-${escapeHtml(s.sessionId)}">${escapeHtml(s.sessionId.slice(0, 12))}</a> ${escapeHtml(s.why)}`,
              )
              .join('<br>'),
          ]),
        )}</table>`;
  const figures = `<h2>Figures</h2><table id="figures"><tr><th>sessions</th><th>diverged</th><th>turns</th><th>failed</th><th>exact</th><th>normalized</th><th>differ</th><th>no calls</th><th>precision</th><th>recall</th><th>misses</th><th>elided</th><th>cut</th></tr>${rows(
    [
      [
        String(f.sessions),
        String(report.sessions.filter((s) => diverged(s.figures)).length),
        String(f.turnsDone),
        String(f.turnsFailed),
        String(f.matches.exact),
        String(f.matches.normalized),
        String(f.matches.differs),
        String(f.matches.none),
        percent(f.precision),
        percent(f.recall),
        String(f.misses),
        String(f.elision.resultsElided),
        String(f.elision.resultsCut),
      ],
    ],
  )}</table>`;
  const failures =
    f.failures.length === 0
      ? ''
      : `<h2>Failed turns</h2><ul>${f.failures
          .map(
            (x) =>
              `<li>${x.count} × ${escapeHtml(x.cause.slice(0, 500))} (first: <a href="#session-${escapeHtml(x.first.sessionId)}-turn-${x.first.turn}">${escapeHtml(x.first.sessionId.slice(0, 12))} turn ${x.first.turn}</a>)</li>`,
          )
          .join('')}</ul>`;
  const side = report.sideEffects
    ? `<h2>Side effects</h2>${
        effects === 0
          ? `<p id="side-effects">none under ${escapeHtml(report.sideEffects.roots.join(', '))}</p>`
          : `<table id="side-effects"><tr><th>kind</th><th>path</th><th>seen by</th></tr>${rows(
              report.sideEffects.changes.map((c) => [
                escapeHtml(c.kind),
                `<code>${escapeHtml(c.path)}</code>`,
                escapeHtml((c.layers ?? []).join(', ')),
              ]),
            )}</table>`
      }`
    : '<h2>Side effects</h2><p id="side-effects">not checked (no directory was watched)</p>';
  const sessions = `<h2>Sessions</h2><table id="sessions"><tr><th>session</th><th>status</th><th>turns</th><th>failed</th><th>first divergence</th><th>misses</th><th>calls made of recorded</th></tr>${rows(
    report.sessions.map(({ figures: s }) => [
      `<a href="#session-${escapeHtml(s.sessionId)}" id="link-${escapeHtml(s.sessionId)}">${escapeHtml(s.sessionId.slice(0, 12))}</a>`,
      s.status === 'pending' ? '–' : escapeHtml(s.status),
      String(s.turnsDone),
      String(s.turnsFailed),
      s.firstDivergence === null
        ? s.status === 'diverged'
          ? 'stopped at a miss'
          : '–'
        : `turn ${s.firstDivergence}`,
      String(s.misses),
      `${s.callsMatched} of ${s.callsOriginal}`,
    ]),
  )}</table>`;
  const data = {
    sessions: report.sessions.map((s) => ({
      figures: s.figures,
      turns: s.turns.map((t) => ({
        ...t,
        ...(t.original ? { original: { ...t.original, text: cut(t.original.text) } } : {}),
        ...(t.replayed ? { replayed: { ...t.replayed, text: cut(t.replayed.text) } } : {}),
      })),
    })),
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>replay-history ${escapeHtml(run.id)}: ${escapeHtml(verdict)}</title><style>${style}</style></head>
<body>
<h1>replay-history run <code>${escapeHtml(run.id)}</code></h1>
<p><span class="verdict ${ok ? 'good' : 'bad'}" id="verdict">${escapeHtml(verdict)}</span></p>
<p><code id="command">${escapeHtml(report.command)}</code><br>replay-history ${escapeHtml(version)} · driver ${escapeHtml(options.driver ?? 'builtin')} · model <code>${escapeHtml(run.model)}</code> · ${escapeHtml(run.mode)} mode · ${escapeHtml(run.status)} · started ${escapeHtml(run.started_at)}</p>
${gates}${figures}${failures}${side}
<h2>Where sessions first diverged</h2>${divergencePlot(report.sessions.map((s) => s.figures))}
${sessions}
<div id="detail"></div>
<script type="application/json" id="data">${embedded(data)}</script>
<script>${script}</script>
</body></html>
`;
}
