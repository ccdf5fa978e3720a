// A run's verdict as Markdown for CI pages (and the data of its HTML page, report-html.ts) (GitHub's step summary and the like): short, tables, the failed gates
// first, then the figures, then the sessions that diverged or failed (the rest counted). `--report FILE` writes
// FILE.md, and the same text is appended to $GITHUB_STEP_SUMMARY when that is set. Pure but for the writing.
import { appendFileSync } from 'node:fs';
import { turns } from '../model/turns.js';
import { assistantMessage } from '../replay/chat.js';
import type { GateVerdict } from '../replay/gates.js';
import { diverged, thresholdText } from '../replay/gates.js';
import type { MissRecord, RunFigures, RunRow, RunStore, SessionFigures } from '../store/runs.js';
import type { SessionStore } from '../store/sessions.js';
import { htmlFile, markdownFile, writeVerdict } from './report-files.js';
import type { ReportSession, ReportTurn } from './report-html.js';
import { version } from './version.js';

export interface RunReport {
  run: RunRow;
  figures: RunFigures;
  sessions: readonly SessionFigures[];
  verdicts: readonly GateVerdict[];
  /** The side-effect checks: none made (undefined), or how many changes under which roots. */
  sideEffects?: { changes: number; roots: readonly string[] };
  /** The command that made the report, as typed. */
  command: string;
}

/** Sessions listed in the table; the others are counted. */
const sessionRows = 50;

const percent = (share: number | null) => (share === null ? '–' : `${(share * 100).toFixed(1)}%`);

/** A table cell: pipes and line breaks would break the table. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

/** `session-<id>`: the anchor a session has in the HTML report (stable across runs). */
export const sessionAnchor = (id: string) => `session-${id}`;

export function formatRunMarkdown(report: RunReport): string {
  const { run, figures: f, verdicts } = report;
  const failed = verdicts.filter((verdict) => !verdict.passed);
  const effects = report.sideEffects?.changes ?? 0;
  const verdict =
    effects > 0
      ? `side effects (${effects})`
      : failed.length > 0
        ? `${failed.length} gate(s) failed`
        : f.turnsFailed > 0
          ? `${f.turnsFailed} turn(s) failed`
          : 'passed';
  const options = JSON.parse(run.options) as { driver?: string };
  const lines = [
    `## replay-history: ${run.id} — ${verdict}`,
    '',
    `\`${cell(report.command)}\``,
    '',
    `replay-history ${version} · driver ${options.driver ?? 'builtin'} · model \`${cell(run.model)}\` · ${run.mode} mode · ${run.status}`,
    '',
  ];
  if (verdicts.length > 0) {
    lines.push('### Gates', '', '| | gate | threshold | figure | sessions |', '|---|---|---|---|---|');
    for (const v of [...failed, ...verdicts.filter((x) => x.passed)])
      lines.push(
        `| ${v.passed ? '✅' : '❌'} | \`${v.option}\` | ${thresholdText(v.gate, v.threshold)} | ${cell(v.said)} | ${
          v.sessions.length === 0
            ? ''
            : `${v.sessions
                .slice(0, 5)
                .map((s) => `\`${s.sessionId.slice(0, 12)}\` (${cell(s.why)})`)
                .join(', ')}${v.sessions.length > 5 ? `, … ${v.sessions.length - 5} more` : ''}`
        } |`,
      );
    lines.push('');
  }
  lines.push(
    '### Figures',
    '',
    '| sessions | diverged | turns | failed | exact | normalized | differ | no calls | precision | recall | misses | side effects |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    `| ${f.sessions} | ${report.sessions.filter(diverged).length} | ${f.turnsDone} | ${f.turnsFailed} | ${f.matches.exact} | ${f.matches.normalized} | ${f.matches.differs} | ${f.matches.none} | ${percent(f.precision)} | ${percent(f.recall)} | ${f.misses} | ${report.sideEffects ? String(effects) : 'not checked'} |`,
    '',
  );
  if (f.failures.length > 0) {
    lines.push('### Failed turns', '');
    for (const failure of f.failures)
      lines.push(
        `- ${failure.count} × ${cell(failure.cause).slice(0, 300)} (first: \`${failure.first.sessionId.slice(0, 12)}\` turn ${failure.first.turn})`,
      );
    lines.push('');
  }
  // The sessions worth a look first: failed, then diverged earliest.
  const notable = report.sessions
    .filter((s) => s.turnsFailed > 0 || diverged(s) || s.misses > 0)
    .sort(
      (a, b) =>
        b.turnsFailed - a.turnsFailed ||
        (a.firstDivergence ?? Number.POSITIVE_INFINITY) - (b.firstDivergence ?? Number.POSITIVE_INFINITY),
    );
  if (notable.length > 0) {
    lines.push(
      '### Sessions that diverged or failed',
      '',
      '| session | turns | failed | first divergence | misses | calls made of recorded |',
      '|---|---|---|---|---|---|',
    );
    for (const s of notable.slice(0, sessionRows))
      lines.push(
        `| \`${s.sessionId.slice(0, 12)}\` | ${s.turnsDone} | ${s.turnsFailed} | ${s.firstDivergence === null ? (s.status === 'diverged' ? 'stopped at a miss' : '–') : `turn ${s.firstDivergence}`} | ${s.misses} | ${s.callsMatched} of ${s.callsOriginal} |`,
      );
    if (notable.length > sessionRows)
      lines.push('', `… and ${notable.length - sessionRows} more session(s).`);
    lines.push('');
  }
  lines.push(
    `${report.sessions.length - notable.length} of ${report.sessions.length} session(s) replayed as recorded.`,
    '',
  );
  return lines.join('\n');
}

/** The command line as a user would type it again (arguments with spaces or quotes quoted). */
export function commandLine(argv: readonly string[] = process.argv.slice(2)): string {
  const quoted = argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`));
  return ['replay-history', ...quoted].join(' ');
}

/** Writes `<file>.md` (whole or not at all; unless `toFile` is false) and appends to $GITHUB_STEP_SUMMARY where it is set. */
export async function writeMarkdown(
  file: string,
  markdown: string,
  env: NodeJS.ProcessEnv = process.env,
  toFile = true,
): Promise<string> {
  const target = markdownFile(file);
  if (toFile) await writeVerdict(target, markdown);
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `${markdown}\n`);
  return target;
}

/** Each session of a run with its turns as the HTML report shows them: the original and the replayed answer. */
export function reportSessions(
  runs: RunStore,
  store: SessionStore,
  runId: string,
  sessions: readonly SessionFigures[],
): ReportSession[] {
  const misses = new Map<string, MissRecord[]>();
  for (const miss of runs.misses(runId)) {
    const list = misses.get(miss.sessionId) ?? [];
    // Bounded per session: a run that missed on every call is summed up by its count.
    if (list.length < 50) list.push(miss);
    misses.set(miss.sessionId, list);
  }
  return sessions.map((figures) => {
    const loaded = store.load(figures.sessionId);
    const recorded = loaded ? [...turns(loaded.session.messages, loaded.own)] : [];
    const shown = (message: {
      content: unknown;
      tool_calls?: { function: { name: string; arguments: string } }[];
    }) => ({
      text: typeof message.content === 'string' ? message.content : '',
      calls: (message.tool_calls ?? []).map((call) => ({
        name: call.function.name,
        args: call.function.arguments,
      })),
    });
    const rows = runs.turnRows(runId, figures.sessionId);
    return {
      figures,
      turns: rows.map((row): ReportTurn => {
        const original = recorded[row.turn - 1]?.response;
        let replayed: ReportTurn['replayed'];
        try {
          if (row.response) replayed = shown(JSON.parse(row.response) as Parameters<typeof shown>[0]);
        } catch {
          replayed = undefined;
        }
        return {
          turn: row.turn,
          match: row.status === 'failed' ? 'failed' : (row.match ?? 'none'),
          ...(original ? { original: shown(assistantMessage(original)) } : {}),
          ...(replayed ? { replayed } : {}),
          misses: (misses.get(figures.sessionId) ?? [])
            .filter((miss) => miss.turn === row.turn)
            .map(({ call, nearest }) => ({ call, nearest })),
          ...(row.error ? { error: row.error } : {}),
        };
      }),
    };
  });
}

/** Writes the HTML beside the Markdown (`FILE.html`), whole or not at all. */
export async function writeHtml(file: string, html: string): Promise<string> {
  const target = htmlFile(file);
  await writeVerdict(target, html);
  return target;
}
