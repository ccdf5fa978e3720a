// `runs compare A B`: a baseline run and a candidate over the same sessions (runs-compare-action.ts does it).
import type { Command } from 'commander';
import { countOf } from '../gates.js';
import { dbOption, jsonOption } from './options.js';

export function registerCompare(runs: Command): void {
  runs
    .command('compare')
    .description('compare a candidate run with a baseline over the same sessions, turn by turn')
    .argument('<baseline>', 'run A (an id, a unique prefix of one, or latest: the run started last)')
    .argument('<candidate>', 'run B (the same)')
    .option('--max-regressions <n>', 'gate: exit 4 when more than this many turns regressed', (value) =>
      countOf('--max-regressions', value),
    )
    .option(
      '--report <file>',
      'also write the comparison to FILE.md (appended to $GITHUB_STEP_SUMMARY when set) and FILE.html',
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
A turn of B improved on A when its tool calls come closer to the original's (exact, then normalized, then
differing; a failed turn is worst), then when it made fewer calls the recording lacks; a turn where neither run
nor the original made a call is judged by how close its text is to the original answer (word-bigram
similarity; a change under 0.1 is not counted). Turns or sessions only one run has are listed apart.

Exit codes: 0 · 2 a usage error (an unknown run) · 4 more turns regressed than --max-regressions.

Examples:
  $ replay-history runs compare run_20261130T101500_3f9a2c run_20261201T090000_7c1d00
  $ replay-history runs compare run_2026113 run_2026120 --max-regressions 0 --json
  $ replay-history runs compare run_2026113 run_2026120 --report compare
  $ replay-history runs compare run_20261130T101500_3f9a2c latest`,
    )
    .action(
      async (
        first: string,
        second: string,
        options: { db: string; json?: boolean; maxRegressions?: number; report?: string },
      ) => {
        // The comparison is loaded by the command (start-up of the others).
        await (await import('./runs-compare-action.js')).compareRuns(first, second, options);
      },
    );
}
