import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { openDb } from '../../store/db.js';
import { atLeast, dbOption, jsonOption, minResultBytes } from './options.js';

export interface StatsOptions {
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
    .action(async (targets: string[], options: StatsOptions) => {
      const { elisionReport } = await import('./stats-action.js');
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
