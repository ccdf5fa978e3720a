import type { Command } from 'commander';
import type { PathSummary } from '../../sources/ingest.js';
import { openDb } from '../../store/db.js';
import { ExitCode, UserError } from '../errors.js';
import { collectGarbage } from '../memory.js';
import { err, formatBytes, progressBar, say, warn, writeOut } from '../output.js';
import { dbOption, jsonOption } from './options.js';

/** Warnings printed per path before the rest are only counted (all of them are in --json). */
const shownWarnings = 20;

export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description('read session logs into the store (files or directories, format detected per file)')
    .argument(
      '[paths...]',
      'log files or directories; default: every agent’s own log directory on this machine',
    )
    .option('--verbose', 'name every ignored file with the reason, and print every warning (on stderr)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Re-running on unchanged input reads nothing again; a log that grew adds only its new messages, and a
Claude Code, Codex, Gemini CLI or Qwen Code log that only grew is read from where the last ingest
stopped (a note says why when one is read whole again instead).
Bad lines are reported with file:line and skipped; the rest is still ingested.

The summary counts sessions new, updated and unchanged (those in files not read again included), the
messages and tool calls this ingest added (a log that grew by one message adds 1), and files read
(of them, those read only from where the last ingest stopped), unchanged, ignored (not a session log,
or empty: --verbose names them, --json lists them as "ignored") and unreadable.

Examples:
  $ replay-history ingest ~/.claude/projects
  $ replay-history ingest sample-sessions --verbose
  $ replay-history ingest sample-sessions --db /tmp/replay.db --json`,
    )
    .action(async (paths: string[], options: { db: string; json?: boolean; verbose?: boolean }) => {
      // The readers of every format are loaded only when ingest runs, not for every command.
      const [{ ingest }, { adapters }] = await Promise.all([
        import('../../sources/ingest.js'),
        import('../../sources/registry.js'),
      ]);
      const targets = paths.length > 0 ? paths : adapters.flatMap((adapter) => adapter.defaultRoots());
      if (targets.length === 0) {
        throw new UserError(
          'no paths given and no agent log directory found on this machine',
          'pass a path: replay-history ingest ~/.claude/projects',
        );
      }
      const db = openDb(options.db, { command: 'ingest' });
      const bar = progressBar('ingest');
      let summaries: PathSummary[];
      try {
        summaries = ingest(db, targets, {
          progress: (done, total, bytes, totalBytes) =>
            bar.update(done, total, `files ${formatBytes(bytes)}/${formatBytes(totalBytes)}`),
          afterLargeFile: collectGarbage,
        });
      } finally {
        bar.end();
        db.close();
      }
      report(summaries, options.json === true, options.verbose === true);
      const unreadable = summaries.some(
        (s) => s.error !== undefined || s.files.failed > 0 || s.warnings.some((w) => w.unreadable),
      );
      process.exitCode = unreadable ? ExitCode.usage : ExitCode.ok;
    });
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function report(summaries: PathSummary[], json: boolean, verbose: boolean): void {
  for (const summary of summaries) {
    if (summary.error) say(`${err.red('error:')} ${summary.path}: ${summary.error}`);
    const shown = verbose ? summary.warnings : summary.warnings.slice(0, shownWarnings);
    for (const warning of shown) {
      warn(`${warning.file}${warning.line !== undefined ? `:${warning.line}` : ''}: ${warning.message}`);
    }
    const more = summary.warnings.length - shown.length;
    if (more > 0) warn(`${summary.path}: ${more} more warning(s); --verbose prints them, --json lists them`);
    for (const note of summary.notes) say(`${err.dim('note:')} ${note}`);
    if (verbose)
      for (const { file, reason } of summary.ignored) say(`${err.dim('ignored:')} ${file}: ${reason}`);
  }
  if (json) {
    writeOut(JSON.stringify({ paths: summaries }, null, 2));
    return;
  }
  for (const s of summaries) {
    if (s.error) continue;
    const continued = s.files.continued
      ? ` (${s.files.continued} only from where the last ingest stopped)`
      : '';
    const files = [`${s.files.read} read${continued}`, `${s.files.unchanged} unchanged`];
    if (s.files.ignored) files.push(`${s.files.ignored} ignored${verbose ? '' : ' (--verbose names them)'}`);
    if (s.files.failed) files.push(`${s.files.failed} unreadable`);
    const rewritten = s.rewritten.messages
      ? ` · rewrote ${plural(s.rewritten.messages, 'message')}, ${plural(s.rewritten.toolCalls, 'tool call')}` +
        ' (their earlier messages changed)'
      : '';
    writeOut(
      `${s.path}: sessions ${s.sessions.new} new, ${s.sessions.updated} updated, ${s.sessions.unchanged} unchanged` +
        ` · added ${plural(s.messages, 'message')}, ${plural(s.toolCalls, 'tool call')}${rewritten}` +
        ` · files ${files.join(', ')} · ${plural(s.skippedLines, 'line')} skipped`,
    );
  }
}
