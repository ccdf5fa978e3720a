import type { Command } from 'commander';
import { jsonOption } from './options.js';

import type { VerifyOptions } from './verify-action.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerVerify(program: Command): void {
  program
    .command('verify')
    .description('run a command and prove it changed nothing on disk under the watched directories')
    .argument('<command>', 'the command to run (put -- before it)')
    .argument('[args...]', 'its arguments')
    .option('--watch <dir>', 'a directory to check, repeatable (default: the current directory)', collect, [])
    .option(
      '--exclude <path>',
      'a file or directory left out, with everything below it, repeatable (exact paths)',
      collect,
      [],
    )
    .option('--junit <file>', 'also write the verdict as JUnit XML, for CI test reporters')
    .option(
      '--sandbox',
      'run the command under bubblewrap: watched directories read-only, no network (Linux, bwrap installed)',
    )
    .option(
      '--no-watcher',
      'no file-system watcher: the manifests alone give the verdict, faster (for CI, which needs only the verdict)',
    )
    .addOption(jsonOption())
    .passThroughOptions()
    .addHelpText(
      'after',
      `
Two layers check every entry under the watched directories: a manifest taken before and after the command
(type, mode, owner, size, mtime, ctime, inode, link target, and a sha256 of each file's content) is the
verdict; a file-system watcher (inotify) running meanwhile says when a change happened and catches files that
came and went. Reported kinds: created, modified, deleted, renamed, mode changed, type changed, link retargeted,
created and deleted. Access times are never compared: reading is not a side effect. With --no-watcher there
is no watcher: the verdict is the same manifest comparison, without the times, and a file made and removed
within the run shows only as its directory modified. It saves the watcher's setup (a crawl of the tree) and the
wait for its last events, for CI runs that need only the verdict.

The command's stdin, stdout and stderr are passed through; with --json its stdout goes to stderr so that stdout
holds only the report. Hashes are cached between runs (in $XDG_CACHE_HOME/replay-history), so a second check
of the same tree reads only the files whose inode, size or times changed.

Exit codes: 3 if anything changed, 1 if the command failed and nothing changed, 0 if it succeeded and nothing
changed, 2 if it could not be run.

Examples:
  $ replay-history verify -- npm test
  $ replay-history verify --watch ~/src/app --exclude ~/src/app/node_modules -- make check
  $ replay-history verify --json --junit verify.xml -- replay-history replay --all
  $ replay-history verify --no-watcher --junit verify.xml -- replay-history replay --all
  $ replay-history verify --sandbox --watch . -- ./agent.sh`,
    )
    .action(async (command: string, args: string[], options: VerifyOptions) => {
      // The checker and what it runs are loaded only for this command (start-up of the others).
      const { verify } = await import('./verify-action.js');
      process.exitCode = await verify([command, ...args], options);
    });
}
