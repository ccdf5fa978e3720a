// `verify`: runs a command between two manifests of the watched directories (verify/check.ts) and reports what
// changed. Loaded by the command's action only (verify.ts registers it).
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Checker, canonicalPath } from '../../verify/check.js';
import { describeOutcome, failed, formatJunit, formatReport, type Outcome } from '../../verify/report.js';
import { probeSandbox, SandboxUnavailable, sandboxed } from '../../verify/sandbox.js';
import { ExitCode, UserError } from '../errors.js';
import { err, progressBar, say, writeOut } from '../output.js';
import { checkReportFiles, writeVerdict } from '../report-files.js';
import { stopSignals } from '../signals.js';

export interface VerifyOptions {
  watch: string[];
  exclude: string[];
  json?: boolean;
  junit?: string;
  sandbox?: boolean;
  /** false with --no-watch. */
  watcher: boolean;
}

export async function verify(argv: string[], options: VerifyOptions): Promise<number> {
  const watch = options.watch.length > 0 ? options.watch : ['.'];
  for (const dir of watch) {
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new UserError(`--watch ${dir}: no such directory`, 'name a directory that exists');
  }
  let runArgv = argv;
  if (options.sandbox) {
    try {
      probeSandbox();
    } catch (error) {
      if (error instanceof SandboxUnavailable) throw new UserError(error.message, error.hint);
      throw error;
    }
    runArgv = sandboxed(argv, {
      readOnly: watch.map(canonicalPath),
      writable: options.exclude.map(canonicalPath),
    });
  }
  const junit = options.junit ? resolve(options.junit) : undefined;
  checkReportFiles({ junit });
  const bar = progressBar('verify');
  const started = performance.now();
  const checker = await Checker.start({
    roots: watch,
    watch: options.watcher,
    exclude: [...options.exclude, ...(junit ? [junit, `${junit}.tmp`] : [])],
    progress: (phase, n) => bar.update(n, n, phase === 'before' ? 'entries before' : 'entries after'),
  });
  bar.end();
  // bubblewrap reports a command it cannot find as a failure of the command (exit 1): look for it first, so that
  // it is still 'could not be run' (exit 2). The sandbox sees the same file system, so the answer holds there.
  const outcome =
    options.sandbox && !findable(argv[0] as string)
      ? { argv, exitCode: null, signal: null, error: `${argv[0]}: command not found` }
      : await runCommand(runArgv, options.json === true);
  outcome.argv = argv;
  const report = await checker.finish();
  bar.end();
  const seconds = (performance.now() - started) / 1000;

  const code =
    report.changes.length > 0
      ? ExitCode.sideEffects
      : outcome.error
        ? ExitCode.usage
        : failed(outcome)
          ? ExitCode.failure
          : ExitCode.ok;
  if (junit) await writeVerdict(junit, formatJunit(report, outcome, seconds));
  if (options.json) {
    writeOut(JSON.stringify({ exitCode: code, command: outcome, ...report }, null, 2));
  } else {
    say(formatReport(report));
    const line = `command ${describeOutcome(outcome)}`;
    say(failed(outcome) ? err.red(line) : err.dim(line));
  }
  return code;
}

/** Whether `file` names an executable, as a path or found on PATH the way execvp looks for it. */
function findable(file: string): boolean {
  const dirs = (process.env.PATH ?? '').split(':').map((dir) => dir || '.');
  const candidates = file.includes('/') ? [file] : dirs.map((dir) => join(dir, file));
  return candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  });
}

/** Runs the command with stdio passed through, and tells how it ended; a signal to us is passed on to it. */
function runCommand(argv: string[], stdoutToStderr: boolean): Promise<Outcome> {
  return new Promise((done) => {
    const [file, ...args] = argv as [string, ...string[]];
    const child = spawn(file, args, { stdio: ['inherit', stdoutToStderr ? 2 : 'inherit', 'inherit'] });
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    const handlers = stopSignals.map((signal) => {
      const handler = forward(signal);
      process.on(signal, handler);
      return [signal, handler] as const;
    });
    const finish = (outcome: Outcome) => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      done(outcome);
    };
    child.once('error', (error: NodeJS.ErrnoException) =>
      finish({
        argv,
        exitCode: null,
        signal: null,
        error: error.code === 'ENOENT' ? `${file}: command not found` : error.message,
      }),
    );
    child.once('exit', (exitCode, signal) => finish({ argv, exitCode, signal }));
  });
}
