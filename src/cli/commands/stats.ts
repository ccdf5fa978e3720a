import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { elideOptions } from '../../replay/elide.js';
import { addSession, emptyFigures, type ToolFigures, totals } from '../../replay/elision-stats.js';
import { openDb } from '../../store/db.js';
import { SessionStore } from '../../store/sessions.js';
import { collectGarbage } from '../memory.js';
import { formatBytes, progressBar, table, writeOut } from '../output.js';
import { atLeast, dbOption, jsonOption, minResultBytes } from './options.js';
import { resolveTargets } from './targets.js';

interface StatsOptions {
  db: string;
  json?: boolean;
  elision?: boolean;
  elideTool: string[];
  maxResultBytes?: number;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('figures over stored sessions; one report so far, --elision: what --elide-repeats saves')
    .argument(
      '[targets...]',
      'session ids or prefixes, or log files/directories (ingested first); default: all',
    )
    .option(
      '--elision',
      'tool results elided, bytes and tokens before and after, per tool (the only report: run when none is named)',
    )
    .option(
      '--elide-tool <name>',
      'count this tool as read-only too, as replay --elide-tool would; repeatable (e.g. --elide-tool mcp__fs__read)',
      collect,
      [],
    )
    .option(
      '--max-result-bytes <n>',
      'with the results cut as replay --max-result-bytes would (e.g. --max-result-bytes 65536)',
      atLeast('--max-result-bytes', minResultBytes),
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
--elision replays nothing: it applies --elide-repeats to the stored contexts and counts. A result is elided only
when it is byte-identical to what the model already had for the same read-only tool and arguments, in the same
context (a compaction starts afresh). Tokens are counted offline with the o200k_base encoding (gpt-tokenizer).
"across contexts" sums every turn's context, i.e. what a forced replay sends: a repeat costs once per later turn.

With no report named, stats runs --elision (the only one so far).

Examples:
  $ replay-history stats
  $ replay-history stats --elision
  $ replay-history stats --elision 6f1c2a34 --json
  $ replay-history stats --elision ~/.claude/projects --elide-tool mcp__fs__read --max-result-bytes 65536`,
    )
    .action((targets: string[], options: StatsOptions) => {
      // --elision is the only report: naming none runs it, rather than an error that can only say "add --elision".
      // Log paths among the targets are ingested first: only then does stats write.
      const db = openDb(options.db, { readOnly: !targets.some(existsSync), command: 'stats with log paths' });
      try {
        elisionReport(db, targets, options);
      } finally {
        db.close();
      }
    });
}

function elisionReport(db: ReturnType<typeof openDb>, targets: string[], options: StatsOptions): void {
  const sessions = new SessionStore(db);
  const ids = resolveTargets(db, targets, targets.length === 0, 'nothing to count');
  const figures = emptyFigures();
  const bar = progressBar('stats');
  const settings = {
    elideRepeats: true,
    extraTools: options.elideTool,
    ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
  };
  ids.forEach((id, index) => {
    const loaded = sessions.load(id);
    if (!loaded) return;
    const elide = elideOptions(loaded.session.agent, settings);
    if (elide) addSession(figures, loaded.session, loaded.own, elide, countTokens);
    bar.update(index + 1, ids.length, 'sessions');
    // One session at a time; a full collection now and then keeps memory flat over thousands.
    if (index % 256 === 255) collectGarbage();
  });
  bar.end();

  const rows = [...figures.perTool.entries()].sort(
    (a, b) => b[1].bytesBefore - b[1].bytesAfter - (a[1].bytesBefore - a[1].bytesAfter),
  );
  const all = totals(figures);
  if (options.json) {
    writeOut(
      JSON.stringify(
        {
          sessions: figures.sessions,
          total: all,
          perTool: Object.fromEntries(rows),
          acrossContexts: figures.contexts,
        },
        null,
        2,
      ),
    );
    return;
  }
  const saved = (before: number, after: number) =>
    before === 0 ? '0.0%' : `${(((before - after) / before) * 100).toFixed(1)}%`;
  const line = (tool: string, f: ToolFigures) => [
    tool,
    String(f.results),
    String(f.elided),
    ...(options.maxResultBytes !== undefined ? [String(f.truncated)] : []),
    `${formatBytes(f.bytesBefore)} → ${formatBytes(f.bytesAfter)}`,
    `${f.tokensBefore} → ${f.tokensAfter}`,
    saved(f.tokensBefore, f.tokensAfter),
  ];
  writeOut(
    table([
      [
        'TOOL',
        'RESULTS',
        'ELIDED',
        ...(options.maxResultBytes !== undefined ? ['CUT'] : []),
        'BYTES',
        'TOKENS',
        'SAVED',
      ],
      ...rows.map(([tool, f]) => line(tool, f)),
      line('all tools', all),
    ]),
  );
  const c = figures.contexts;
  writeOut(
    `${figures.sessions} session(s); across the ${c.turns} turn contexts a forced replay sends: ` +
      `${formatBytes(c.bytesBefore)} → ${formatBytes(c.bytesAfter)} of tool results (${saved(c.bytesBefore, c.bytesAfter)} less)`,
  );
}
