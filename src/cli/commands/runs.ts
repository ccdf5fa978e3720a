import type { Command } from 'commander';
import { addGateOptions, type GateFlags } from '../gates.js';
import { dbOption, jsonOption } from './options.js';
import { registerCompare } from './runs-compare.js';

export function registerRuns(program: Command): void {
  const runs = program
    .command('runs')
    .description('list replay runs with their figures, or show one run with its side effects')
    .argument(
      '[run-id]',
      'show this run (its id, a unique prefix of it, or latest): its figures and every side effect its checks found',
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Figures per run: turns done and failed, how the model's tool calls compare with the original's (exact,
normalized, differ; precision and recall over calls), the first divergent turn of each session, tokens and
time, and the side effects the checker found around it (– for a run that watched no directory).

Examples:
  $ replay-history runs
  $ replay-history runs --json
  $ replay-history runs run_20261130T101500_3f9a2c
  $ replay-history runs latest
  $ replay-history runs check run_20261130T101500_3f9a2c --min-recall 95%
  $ replay-history runs check latest --min-recall 95%
  $ replay-history runs compare run_20261130T101500_3f9a2c run_20261201T090000_7c1d00`,
    )
    .action(async (id: string | undefined, options: { db: string; json?: boolean }) => {
      // What lists and shows runs is loaded by the command (start-up of the others).
      (await import('./runs-action.js')).listRuns(id, options);
    });
  registerCheck(runs);
  registerCompare(runs);
}

/** `runs check RUN_ID`: a finished run judged by gates, as `replay` judges the run it makes. */
function registerCheck(runs: Command): void {
  const check = runs
    .command('check')
    .description('judge a finished run by gates: exit 4 when one fails, 3 when the run had side effects')
    .argument('<run-id>', 'the run: its id, a unique prefix of it, or latest (the run started last)');
  addGateOptions(check)
    .option(
      '--junit <file>',
      'also write the verdict as JUnit XML: one test case per session, one for side effects',
    )
    .option(
      '--report <file>',
      'also write the verdict to FILE.md (appended to $GITHUB_STEP_SUMMARY when set) and FILE.html (a self-contained page)',
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Each gate is a threshold on a figure of the run (see replay --help): --min-recall and --min-precision (a share,
0.95 or 95%), --max-diverged (a share of sessions), --max-misses, --max-failed-turns, --diverge-after (a turn).
--gates FILE reads them from a TOML or JSON file ([gates] min_recall = 0.95, …); an option given here wins.
A failed gate is said with its figure, its threshold and the sessions that made it fail.

Exit codes: 0 every gate passed · 2 a usage error (no gate, an unknown run) · 3 the run's checks found side
effects (said whatever the gates say) · 4 a gate failed.

Examples:
  $ replay-history runs check run_20261130T101500_3f9a2c --min-recall 95% --min-precision 0.9
  $ replay-history runs check run_2026 --max-diverged 10% --max-misses 0 --max-failed-turns 0 --diverge-after 3
  $ replay-history runs check run_2026 --gates replay-history.toml --json --junit replay.xml --report check`,
    )
    .action(
      async (
        id: string,
        options: GateFlags & { db: string; json?: boolean; junit?: string; report?: string },
      ) => {
        await (await import('./runs-action.js')).checkRun(id, options);
      },
    );
}
