import type { Command } from 'commander';
import { ingest, type PathSummary } from '../../sources/ingest.js';
import { adapters } from '../../sources/registry.js';
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
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Re-running on unchanged input reads nothing again; a log that grew adds only its new messages.
Bad lines are reported with file:line and skipped; the rest is still ingested.

Examples:
  $ replay-history ingest ~/.claude/projects
  $ replay-history ingest sample-sessions --db /tmp/replay.db --json`,
    )
    .action((paths: string[], options: { db: string; json?: boolean }) => {
      const targets = paths.length > 0 ? paths : adapters.flatMap((adapter) => adapter.defaultRoots());
      if (targets.length === 0) {
        throw new UserError(
          'no paths given and no agent log directory found on this machine',
          'pass a path: replay-history ingest ~/.claude/projects',
        );
      }
      const db = openDb(options.db);
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
      report(summaries, options.json === true);
      const unreadable = summaries.some(
        (s) => s.error !== undefined || s.files.failed > 0 || s.warnings.some((w) => w.unreadable),
      );
      process.exitCode = unreadable ? ExitCode.usage : ExitCode.ok;
    });
}

function report(summaries: PathSummary[], json: boolean): void {
  for (const summary of summaries) {
    if (summary.error) say(`${err.red('error:')} ${summary.path}: ${summary.error}`);
    for (const warning of summary.warnings.slice(0, shownWarnings)) {
      warn(`${warning.file}${warning.line !== undefined ? `:${warning.line}` : ''}: ${warning.message}`);
    }
    const more = summary.warnings.length - shownWarnings;
    if (more > 0) warn(`${summary.path}: ${more} more warning(s); --json lists them all`);
    for (const note of summary.notes) say(`${err.dim('note:')} ${note}`);
  }
  if (json) {
    writeOut(JSON.stringify({ paths: summaries }, null, 2));
    return;
  }
  for (const s of summaries) {
    if (s.error) continue;
    const files = [`${s.files.read} read`, `${s.files.unchanged} unchanged`];
    if (s.files.ignored) files.push(`${s.files.ignored} ignored`);
    if (s.files.failed) files.push(`${s.files.failed} unreadable`);
    writeOut(
      `${s.path}: sessions ${s.sessions.new} new, ${s.sessions.updated} updated, ${s.sessions.unchanged} unchanged` +
        ` · ${s.messages} messages · ${s.toolCalls} tool calls · files ${files.join(', ')}` +
        ` · ${s.skippedLines} line(s) skipped`,
    );
  }
}
