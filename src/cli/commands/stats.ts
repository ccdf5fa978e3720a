import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { openDb } from '../../store/db.js';
import { UserError } from '../errors.js';
import { atLeast, dbOption, jsonOption, minResultBytes } from './options.js';

export interface StatsOptions {
  db: string;
  json?: boolean;
  elision?: boolean;
  fidelity?: boolean;
  elideTool: string[];
  maxResultBytes?: number;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description(
      'figures over stored sessions: --elision (what --elide-repeats saves) or --fidelity (how each turn’s context was rebuilt)',
    )
    .argument(
      '[targets...]',
      'session ids or prefixes, or log files/directories (ingested first); default: all',
    )
    .option(
      '--elision',
      'tool results elided, bytes and tokens before and after, per tool (the report run when none is named)',
    )
    .option(
      '--fidelity',
      'per session, how each turn’s context was rebuilt: exact from request records, partly, from attachments, or the conversation only',
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

--fidelity replays nothing either: per session it counts the turns whose context is the request as sent, rebuilt
from the agent's own request records (Claude Code 2.1.3xx; "partial" when some message could not be found), the
turns rebuilt from the conversation and the harness text logged as attachments, and those rebuilt from the
conversation alone; for the first, whether each rebuilt message hashes to the tail hash it was recorded under (a
self-check of the reader on your own history). --json lists every turn, with what is not known of it.

With no report named, stats runs --elision.

Examples:
  $ replay-history stats
  $ replay-history stats --elision
  $ replay-history stats --elision 6f1c2a34 --json
  $ replay-history stats --elision ~/.claude/projects --elide-tool mcp__fs__read --max-result-bytes 65536
  $ replay-history stats --fidelity
  $ replay-history stats --fidelity ~/.claude/projects --json`,
    )
    .action(async (targets: string[], options: StatsOptions) => {
      if (options.fidelity && options.elision)
        throw new UserError('--elision and --fidelity are two reports', 'run stats once for each');
      if (options.fidelity) {
        const { fidelityReport } = await import('./stats-fidelity.js');
        const db = openDb(options.db, {
          readOnly: !targets.some(existsSync),
          command: 'stats with log paths',
        });
        try {
          await fidelityReport(db, targets, options);
        } finally {
          db.close();
        }
        return;
      }
      const { elisionReport } = await import('./stats-action.js');
      // Naming no report runs --elision, rather than an error that can only say "add --elision".
      // Log paths among the targets are ingested first: only then does stats write.
      const db = openDb(options.db, { readOnly: !targets.some(existsSync), command: 'stats with log paths' });
      try {
        await elisionReport(db, targets, options);
      } finally {
        db.close();
      }
    });
}
