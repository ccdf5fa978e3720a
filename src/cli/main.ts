import { Command, CommanderError, Help, type Option } from 'commander';
import { StoreError, storeFailure } from '../store/db.js';
import { registerExport } from './commands/export.js';
import { registerIngest } from './commands/ingest.js';
import { registerReplay } from './commands/replay.js';
import { registerRuns } from './commands/runs.js';
import { registerSessions } from './commands/sessions.js';
import { registerShow } from './commands/show.js';
import { registerStats } from './commands/stats.js';
import { registerVerify } from './commands/verify.js';
import { ExitCode, UserError } from './errors.js';
import { formatError, say } from './output.js';
import { version } from './version.js';

export function program(): Command {
  const cli = new Command('replay-history')
    .description(
      'Turn coding-agent session logs into training data and a safe regression harness.\n' +
        'Logs are ingested into a SQLite store; see each command’s --help for examples.',
    )
    .version(version)
    .configureHelp({
      // A repeatable option given no value is simply none, and an on/off flag says in its text which is the
      // default: "(default: [])" or "(default: false)" says nothing to a user.
      optionDescription(option: Option): string {
        const empty =
          (Array.isArray(option.defaultValue) && option.defaultValue.length === 0) ||
          (option.isBoolean() && typeof option.defaultValue === 'boolean');
        const shown = empty
          ? Object.assign(Object.create(option) as Option, { defaultValue: undefined })
          : option;
        return Help.prototype.optionDescription.call(this, shown);
      },
    })
    .enablePositionalOptions()
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Exit codes: 0 success · 1 failure · 2 usage error or unreadable input · 3 side effects detected · 4 a gate
failed (replay, runs check) · 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM. When several apply: 2 (found
before anything runs), then 3 (side effects, even in a run that also failed), then 4, then 1.

Example:
  $ replay-history ingest sample-sessions && replay-history sessions`,
    );
  registerIngest(cli);
  registerSessions(cli);
  registerShow(cli);
  registerReplay(cli);
  registerRuns(cli);
  registerStats(cli);
  registerExport(cli);
  registerVerify(cli);
  for (const command of cli.commands) command.exitOverride();
  return cli;
}

// `replay-history sessions | head`: the reader went away. That is how pipes end, not an error.
// Anything else (a full disk under a redirect) is said plainly: the output is incomplete.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  say(formatError(`cannot write the output: ${error.message}`, 'what was written is incomplete'));
  process.exit(ExitCode.failure);
});

async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (error) {
    process.exitCode = handle(error);
  }
}

function handle(raised: unknown): number {
  // SQLite's errors from the store (a damaged file, a refused write) can come out of any query: said here once.
  const error = storeFailure(raised) ?? raised;
  if (error instanceof CommanderError) {
    // Commander has already printed its message.
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
    if (error.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  if (error instanceof UserError) {
    say(formatError(error.message, error.hint));
    return error.exitCode;
  }
  if (error instanceof StoreError) {
    say(formatError(error.message, error.hint));
    return error.exitCode;
  }
  const e = error as NodeJS.ErrnoException;
  if (process.env.DEBUG?.includes('replay-history')) say(e?.stack ?? String(error));
  say(formatError(e?.message ?? String(error), 'set DEBUG=replay-history for the stack trace'));
  return ExitCode.failure;
}

await main(process.argv);
