// What `export` does, loaded only when it runs: the tokenizer, the redaction rules and the renderers take most
// of a second to load, which `replay-history --help` or `sessions` should not pay.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainOn } from '../../export/build.js';
import { trainerConfigs } from '../../export/configs.js';
import { formatFor } from '../../export/formats/index.js';
import { Redactor } from '../../export/redact.js';
import { Exporter, type ExportReport } from '../../export/run.js';
import type { Unit } from '../../export/sample.js';
import { scanThreadCount } from '../../export/scan-thread.js';
import {
  kindName,
  removeTemporaries,
  Sink,
  SinkError,
  sharesStdout,
  targetOf,
  writeWhole,
} from '../../export/sink.js';
import { type Side, splitFile } from '../../export/split.js';
import { measureFor, TokenizerError } from '../../export/tokenizer.js';
import { anotherAlive, parseOwner } from '../../processes.js';
import type { openDb } from '../../store/db.js';
import { LATEST, RunStore } from '../../store/runs.js';
import { SessionStore } from '../../store/sessions.js';
import { ExitCode, UserError } from '../errors.js';
import { err, formatBytes, progressBar, say, warn, writeOut } from '../output.js';
import { apart, notAnInput, notAPairsFile } from '../report-files.js';
import { onStop } from '../signals.js';

import type { ExportOptions } from './export.js';

export async function runExport(db: ReturnType<typeof openDb>, given: ExportOptions): Promise<void> {
  // `--out -` is stdout, as for most tools, not a file named '-'.
  const options: ExportOptions = given.out === '-' ? { ...given, out: undefined } : given;
  const runs = new RunStore(db);
  const sessions = new SessionStore(db);
  let run: ReturnType<RunStore['get']>;
  if (options.from === LATEST) {
    run = runs.latest();
    if (!run) throw new UserError('no replay run yet for --from latest', 'replay-history replay --help');
  } else if (options.from.startsWith('run:')) {
    const id = options.from.slice(4);
    run = runs.resolve(id);
  } else if (options.from !== 'original') {
    throw new UserError(`--from takes original, run:RUN_ID or latest, not '${options.from}'`);
  }
  if (run) {
    keptPairs(run);
    // Its pairs file still grows: what is in it now is exported (a line being written is left for later).
    const holder = run.status === 'running' ? parseOwner(run.owner) : undefined;
    if (anotherAlive(holder))
      warn(
        `run ${run.id} is still running (process ${holder.pid}): the pairs it has written so far are exported`,
      );
  }

  const dpo = options.format === 'dpo';
  if (dpo && !run)
    throw new UserError('--format dpo needs a replay run', 'pass --from run:RUN_ID or --from latest');
  if (dpo && options.unit !== undefined && options.unit !== 'model-turn')
    throw new UserError(
      `--unit ${options.unit} does not apply to --format dpo: a preference row is one model turn, its two answers`,
      'leave --unit out for dpo',
    );
  const unit: Unit = dpo ? 'model-turn' : (options.unit ?? (run ? 'model-turn' : 'session'));
  const trainOn: TrainOn =
    options.trainOn ?? (run ? 'replayed' : unit === 'model-turn' ? 'last' : 'all-assistant');
  if (!run && trainOn === 'replayed')
    throw new UserError(
      '--train-on replayed needs a replay run',
      'pass --from run:RUN_ID, or --train-on all-assistant',
    );
  if (run && unit !== 'model-turn' && (run.mode === 'forced' || unit === 'user-turn')) {
    throw new UserError(
      `--unit ${unit} does not fit a ${run.mode}-mode run`,
      run.mode === 'forced'
        ? 'a forced run answers each original turn on its own: export it per model turn'
        : 'a free run exports per model turn or per session',
    );
  }
  if (options.redactName.length > 0 && !options.redact)
    throw new UserError('--redact-name needs redaction on', 'leave out --no-redact, or --redact-name');
  if (options.elideTool.length > 0 && !options.elideRepeats)
    throw new UserError('--elide-tool only makes sense with --elide-repeats');
  const outputs = [
    ['--out', options.out],
    ...(options.split !== undefined && options.out
      ? (['train', 'validation'] as const).map(
          (side) => ['--split', splitFile(options.out as string, side)] as const,
        )
      : []),
  ] as const;
  notAnInput(db, outputs);
  notAPairsFile(db, outputs);
  // Nor a file it reads: the system prompt, the tokenizer (a file, or the folder holding tokenizer.json).
  const tokenizer =
    options.tokenizer === undefined || ['o200k', 'o200k_base'].includes(options.tokenizer)
      ? undefined
      : options.tokenizer;
  apart(outputs, [
    ['--system-prompt', options.systemPrompt],
    ['--tokenizer', tokenizer],
    ['--tokenizer', tokenizer && join(tokenizer, 'tokenizer.json')],
  ]);
  if (options.split !== undefined && !options.out)
    throw new UserError(
      '--split writes two files',
      'pass --out FILE: FILE.train… and FILE.validation… are written',
    );

  if (options.tokenizer !== undefined && options.maxTokens === undefined)
    say('note: --tokenizer without --max-tokens only changes what the token counts of the report are in');
  let measure: ReturnType<typeof measureFor>;
  try {
    measure = measureFor(options.tokenizer);
  } catch (error) {
    if (error instanceof TokenizerError)
      throw new UserError(error.message, 'pass o200k, or the tokenizer.json of the model you train');
    throw error;
  }
  let systemPrompt: string | undefined;
  if (options.systemPrompt !== undefined) {
    try {
      systemPrompt = readFileSync(options.systemPrompt, 'utf8').replace(/\n$/, '');
    } catch (error) {
      throw new UserError(
        `--system-prompt ${options.systemPrompt}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      );
    }
    if (systemPrompt.trim() === '') throw new UserError(`--system-prompt ${options.systemPrompt} is empty`);
  }
  const format = formatFor(options.format, { trainOn, unit });
  const shown =
    options.elideRepeats || options.maxResultBytes !== undefined
      ? {
          elideRepeats: options.elideRepeats === true,
          extraTools: options.elideTool,
          ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
        }
      : undefined;

  const split = options.split !== undefined;
  const sinks = await openSinks(options.out, split);
  const sinkFor = (side: Side): Sink => {
    const sink = sinks.get(side);
    if (!sink) throw new Error(`no output for the ${side} side`);
    return sink;
  };
  const exporter = new Exporter(
    {
      format,
      unit,
      trainOn,
      includeInjected: options.includeInjected === true,
      branches: options.branches === true,
      ...(shown ? { shown } : {}),
      minTurns: options.minTurns,
      ...(options.split !== undefined ? { split: options.split } : {}),
      seed: options.seed,
      ...(options.redact
        ? { redactor: new Redactor({ names: options.redactName }), scanThreads: scanThreadCount() }
        : {}),
      measure,
      ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    },
    run ? `run:${run.id}` : 'original',
    (row, side) => sinkFor(side).write(row),
  );

  const bar = progressBar('export');
  // Ctrl-C, `kill`, a closed terminal: the files being written are left as they were (their temporary files go).
  const stopped = onStop((signal) => {
    bar.end();
    const left = removeTemporaries();
    say(
      `\ninterrupted (${signal})${left.length > 0 ? `; nothing written to ${left.join(', ')}: as it was before` : ''}`,
    );
  });
  try {
    if (run) await exporter.fromRun(run, runs, sessions);
    else await exporter.fromStore(sessions, (done, total) => bar.update(done, total, 'sessions'));
    for (const sink of sinks.values()) await sink.close();
  } catch (error) {
    for (const sink of sinks.values()) sink.abandon();
    // `--out /dev/stdout | head`: the reader went away, which is how pipes end, as for plain stdout.
    const ours = [...sinks.values()].some((sink) => sharesStdout(sink.target));
    if (ours && error instanceof SinkError && error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw plainly(error);
  } finally {
    bar.end();
    stopped();
  }
  if (split) {
    for (const [side, sink] of sinks) if (sink.rows === 0) say(`${side}: 0 samples (empty file written)`);
  }
  // The companion registers a dataset file under its name; a device or a pipe has none worth registering.
  if (format.companion) {
    for (const sink of sinks.values()) {
      if (!sink.file || !sink.target?.atomic) continue;
      const companion = format.companion(sink.file);
      await writeWhole(companion.file, mergedCompanion(companion.file, companion.content)).catch(
        (error: unknown) => {
          throw plainly(error);
        },
      );
      say(`${err.dim('wrote')} ${companion.file}`);
    }
  }

  const report = exporter.report;
  // Trainer configs from the data, once for the whole export (both sides of a split in one config); none for an
  // export with no row, whose lengths say nothing.
  const trainFile = sinks.get('train');
  const validationFile = sinks.get('validation');
  if (trainFile?.file && trainFile.target?.atomic && report.samples.written > 0) {
    for (const config of trainerConfigs({
      format: options.format,
      unit,
      trainOn,
      files: {
        train: trainFile.file,
        ...(validationFile?.file ? { validation: validationFile.file } : {}),
      },
      longest: report.length.after.max,
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      tokenizer: report.length.tokenizer,
    })) {
      await writeWhole(config.file, config.content).catch((error: unknown) => {
        throw plainly(error);
      });
      say(`${err.dim('wrote')} ${config.file} (${config.what})`);
    }
  }
  const written = [...sinks].map(([side, sink]) => ({ side, sink }));
  const files = written.flatMap(({ sink }) => (sink.target?.atomic ? [sink.target.path] : []));
  if (options.json) {
    const outputs = written.map(({ side, sink }) => ({
      path: sink.file ?? null,
      kind: sink.target?.kind ?? 'stdout',
      writesTo: sink.target?.writesTo ?? null,
      inPlace: sink.target ? !sink.target.atomic : true,
      ...(split ? { side } : {}),
      samples: sink.rows,
      bytes: sink.bytes,
    }));
    const json = JSON.stringify({ ...report, files, outputs }, null, 2);
    // The JSON goes to stdout only when the rows do not.
    const rowsOnStdout = written.some(({ sink }) => !sink.target || sharesStdout(sink.target));
    if (rowsOnStdout) say(json);
    else writeOut(json);
  } else
    say(
      formatExport(
        report,
        written.map(({ sink }) => sink),
        split,
      ),
    );
}

/**
 * The outputs, opened before the first row is made: a path that cannot be written fails before any work, and
 * every output exists at the end even with no row for it (both sides of a split, always).
 */
async function openSinks(out: string | undefined, split: boolean): Promise<Map<Side, Sink>> {
  const sinks = new Map<Side, Sink>();
  try {
    if (!split || out === undefined) {
      sinks.set('train', await Sink.open(out));
      return sinks;
    }
    const target = targetOf(out);
    if (!target.atomic)
      throw new UserError(
        `--split cannot write beside ${out}: it is a ${kindName(target)}, with no FILE.train and FILE.validation`,
        'pass --out with a file name: FILE.train… and FILE.validation… are written beside it',
      );
    for (const side of ['train', 'validation'] as const)
      sinks.set(side, await Sink.open(splitFile(out, side)));
    return sinks;
  } catch (error) {
    for (const sink of sinks.values()) sink.abandon();
    throw plainly(error);
  }
}

/** A write that failed is the user's to fix (room, permissions, a reader), said in one line: exit 1. */
function plainly(error: unknown): unknown {
  return error instanceof SinkError ? new UserError(error.message, error.hint, ExitCode.failure) : error;
}

/** Where a sink's rows went, in words: a file, a link and its target, or a device written in place. */
function describeSink(sink: Sink): string {
  const target = sink.target;
  const size = formatBytes(sink.bytes);
  if (!target) return `stdout (${size})`;
  if (!target.atomic) return `${target.path} (${kindName(target)}, written in place, ${size})`;
  return target.kind === 'link'
    ? `${target.path} → ${target.writesTo} (${size})`
    : `${target.path} (${size})`;
}

/**
 * A JSON companion (LLaMA-Factory's dataset_info.json) usually registers other datasets too: ours is added to what
 * the file holds, never written over it. Anything else is written whole.
 */
function mergedCompanion(file: string, content: string): string {
  if (!file.endsWith('.json') || !existsSync(file)) return content;
  try {
    const existing = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (existing === null || typeof existing !== 'object' || Array.isArray(existing)) return content;
    return `${JSON.stringify({ ...existing, ...(JSON.parse(content) as object) }, null, 2)}\n`;
  } catch {
    throw new UserError(`${file} is not valid JSON`, 'fix or move it: export adds its entry to that file');
  }
}

function counts(record: Record<string, number>): string {
  const entries = Object.entries(record).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return '0';
  const total = entries.reduce((n, [, v]) => n + v, 0);
  return `${total} (${entries.map(([k, v]) => `${k}: ${v}`).join(', ')})`;
}

/** Row lengths, and what --max-tokens did to them. */
function lengths(report: ExportReport): string {
  const { before, after, rows, maxTokens } = report.length;
  const said = (figures: typeof before) => `p50 ${figures.p50}, p95 ${figures.p95}, max ${figures.max}`;
  if (maxTokens === null) return `${said(after)} tokens long (tools and template included)`;
  return (
    `${said(before)} tokens long before --max-tokens ${maxTokens}, ${said(after)} after: ` +
    `${rows.fit} fit, ${rows.trimmed} trimmed, ${rows.split} split into ${rows.fromSplits}, ${rows.dropped} dropped`
  );
}

function formatExport(report: ExportReport, sinks: Sink[], split: boolean): string {
  const s = report.samples;
  const lines = [
    `export ${report.format} from ${report.from}, per ${report.unit}, training on ${report.trainOn}: ${s.written} sample(s) from ${report.sessions} session(s)` +
      (split ? ` (train ${s.train}, validation ${s.validation})` : ''),
    `written     ${sinks.map(describeSink).join(', ')}`,
    `tokens      ${report.tokens.total} in all, ${report.tokens.trained} trained (${report.length.tokenizer})`,
    `rows        ${lengths(report)}`,
    `duplicates  ${report.duplicates} dropped`,
    `skipped     ${counts(report.skipped)}`,
    `redacted    ${counts(report.redactions)}`,
  ];
  if (Object.keys(report.warnings).length > 0) lines.push(`warnings    ${counts(report.warnings)}`);
  if (report.elision.resultsElided + report.elision.resultsCut > 0)
    lines.push(
      `elided      ${report.elision.resultsElided} repeated result(s), ${report.elision.resultsCut} cut; ${formatBytes(report.elision.bytesSaved)} not written`,
    );
  return lines.join('\n');
}

/**
 * A run's pairs are read back from the file it wrote. One that streamed them (`--out /dev/stdout`, a FIFO, a
 * device) kept none: opening a FIFO to read would wait for a writer for ever, and `/dev/stdout` is this export's
 * own stdout, not the run's.
 */
function keptPairs(run: NonNullable<ReturnType<RunStore['get']>>): void {
  const file = run.out_file;
  // Not atomic: a device, FIFO or socket, or what a descriptor reaches (`/dev/stdout`, this export's own stdout).
  let streamed: boolean;
  try {
    streamed = !targetOf(file).atomic;
  } catch {
    // A path that leads nowhere a file can be (a link loop, a folder) holds no pairs either.
    streamed = true;
  }
  if (streamed)
    throw new UserError(
      `run ${run.id} wrote its pairs to ${file}, which is not a file: they were not kept, so there is nothing to export from it`,
      'replay with --out FILE to export what a run answered',
    );
}
