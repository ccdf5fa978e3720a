// The export pipeline: samples from the store or a run's pairs, then clean, redact, render, drop duplicates, split
// and write — one sample at a time, so memory does not grow with the store (apart from the duplicate digests).
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { type ElideOptions, elideOptions, type ShownSettings, savings } from '../replay/elide.js';
import type { Pair } from '../replay/pairs.js';
import { readLines } from '../sources/lines.js';
import type { RunRow, RunStore } from '../store/runs.js';
import type { SessionStore } from '../store/sessions.js';
import { type Count, fitToBudget, opened, sampleTokens, spread, withSystem } from './budget.js';
import {
  type BuildOptions,
  type Built,
  fromPair,
  fromSession,
  preferenceFromPair,
  type TrainOn,
} from './build.js';
import { type Redacting, redactSample, sampleTexts } from './clean.js';
import { CountThread } from './count-thread.js';
import { RowSerialiser } from './row.js';
import type { Format, Sample, SampleMessage, Unit } from './sample.js';
import { ScanThreads } from './scan-thread.js';
import { type Side, sideOf } from './split.js';
import { type Measure, o200k, remembering } from './tokenizer.js';

/** How far ahead of the sample being taken the scanning threads are sent samples: at most this many, … */
const AHEAD_SAMPLES = 32;
/** … holding at most this many UTF-16 code units of text. */
const AHEAD_CHARS = 4_000_000;

export interface ExportSettings {
  format: Format;
  unit: Unit;
  trainOn: TrainOn;
  includeInjected: boolean;
  /** Abandoned rewind branches too: off by default, as each repeats the prefix it shares with its session. */
  branches?: boolean;
  shown?: ShownSettings;
  minTurns: number;
  /** Share of sessions on the train side; undefined: no split. */
  split?: number;
  seed: number;
  redactor?: Redacting;
  /** Threads that scan texts for the redactor ahead of the main thread (scan-thread.ts); 0 or absent: none. */
  scanThreads?: number;
  /** What tokens are counted in (default o200k_base). */
  measure?: Measure;
  /** --system-prompt: every row's system prompt. */
  systemPrompt?: string;
  /** --max-tokens: every row made to fit (budget.ts). */
  maxTokens?: number;
}

/** Rows against the length budget, and the lengths of rows before and after it (tools and template included). */
export interface LengthReport {
  tokenizer: string;
  maxTokens: number | null;
  rows: { fit: number; trimmed: number; split: number; fromSplits: number; dropped: number };
  before: { p50: number; p95: number; max: number };
  after: { p50: number; p95: number; max: number };
}

export interface ExportReport {
  format: string;
  from: string;
  unit: Unit;
  trainOn: TrainOn;
  sessions: number;
  samples: { written: number; train: number; validation: number };
  tokens: { total: number; trained: number };
  length: LengthReport;
  duplicates: number;
  skipped: Record<string, number>;
  warnings: Record<string, number>;
  redactions: Record<string, number>;
  elision: { resultsElided: number; resultsCut: number; bytesSaved: number };
}

/** Where a row goes: the side of the split it belongs to (always 'train' without a split). */
export type Write = (row: string, side: Side) => Promise<void>;

function bump(counts: Record<string, number>, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

function messageText(message: SampleMessage): string {
  if (message.role === 'assistant') {
    const calls = message.calls.map((call) => `${call.name} ${call.raw ?? JSON.stringify(call.arguments)}`);
    return [message.content, ...calls].join('\n');
  }
  return message.content;
}

/** Tokens of the sample's text, and of the part a trainer learns. */
function tokens(sample: Sample, count: Count): { total: number; trained: number } {
  let total = 0;
  let trained = 0;
  const add = (message: SampleMessage) => {
    const n = count(messageText(message));
    total += n;
    if (message.role === 'assistant' && message.train) trained += n;
  };
  for (const message of sample.messages) add(message);
  if (sample.preference) {
    add(sample.preference.chosen);
    add(sample.preference.rejected);
  }
  return { total, trained };
}

export class Exporter {
  readonly report: ExportReport;
  private readonly seen = new Set<string>();
  private readonly rows = new RowSerialiser();
  private readonly count: Count;
  /** Row lengths before and after the budget (one number a row, for the percentiles). */
  private readonly before: number[] = [];
  private readonly after: number[] = [];
  /** Where the redactor's rules scan the texts ahead of the main thread (scan-thread.ts), during a run. */
  private scan: ScanThreads | undefined;
  /** Where the report's counts are made without --max-tokens (count-thread.ts); null until first asked. */
  private thread: CountThread | undefined | null = null;

  constructor(
    private readonly settings: ExportSettings,
    from: string,
    private readonly write: Write,
  ) {
    this.report = {
      format: settings.format.name,
      from,
      unit: settings.unit,
      trainOn: settings.trainOn,
      sessions: 0,
      samples: { written: 0, train: 0, validation: 0 },
      tokens: { total: 0, trained: 0 },
      length: {
        tokenizer: (settings.measure ?? o200k).name,
        maxTokens: settings.maxTokens ?? null,
        rows: { fit: 0, trimmed: 0, split: 0, fromSplits: 0, dropped: 0 },
        before: { p50: 0, p95: 0, max: 0 },
        after: { p50: 0, p95: 0, max: 0 },
      },
      duplicates: 0,
      skipped: {},
      warnings: {},
      redactions: {},
      elision: { resultsElided: 0, resultsCut: 0, bytesSaved: 0 },
    };
    this.count = remembering((settings.measure ?? o200k).count);
  }

  buildOptions(agent: Sample['agent']): BuildOptions {
    const shown: ElideOptions | undefined = elideOptions(agent, this.settings.shown);
    return {
      unit: this.settings.unit,
      trainOn: this.settings.trainOn,
      includeInjected: this.settings.includeInjected,
      ...(shown ? { shown } : {}),
    };
  }

  /** A line of the pairs file that cannot be read: said (file and line), and the export goes on. */
  readonly badLine = (line: number, why: string): void => {
    bump(this.report.warnings, `pairs file line ${line}: ${why}`);
  };

  skip(reason: string, by = 1): void {
    bump(this.report.skipped, reason, by);
  }

  /** One built sample through redaction, rendering, the duplicate check and the split, to the output. */
  async take(built: Built): Promise<void> {
    if ('skip' in built) {
      this.skip(built.skip);
      return;
    }
    for (const note of built.notes) bump(this.report.warnings, note);
    const saved = savings(built.fates);
    this.report.elision.resultsElided += saved.elided;
    this.report.elision.resultsCut += saved.truncated;
    this.report.elision.bytesSaved += saved.bytesSaved;
    const redacted = this.settings.redactor
      ? redactSample(this.settings.redactor, built.sample)
      : built.sample;
    const prompted =
      this.settings.systemPrompt === undefined ? redacted : withSystem(redacted, this.settings.systemPrompt);
    const reopened = opened(prompted);
    if (reopened)
      bump(this.report.warnings, 'a row that opened with the model’s message given a user message before it');
    const sample = reopened ?? prompted;
    const budget = this.settings.maxTokens;
    if (budget === undefined) {
      await this.emit(sample);
      return;
    }
    const fitted = fitToBudget(sample, budget, this.count);
    const rows = this.report.length.rows;
    if (fitted.outcome === 'dropped') {
      this.before.push(sampleTokens(sample, this.count));
      rows.dropped++;
      this.skip(fitted.why);
      return;
    }
    this.before.push(
      fitted.outcome === 'fits' ? (fitted.tokens[0] as number) : sampleTokens(sample, this.count),
    );
    if (fitted.outcome === 'fits') rows.fit++;
    else if (fitted.outcome === 'trimmed') rows.trimmed++;
    else {
      rows.split++;
      rows.fromSplits += fitted.samples.length;
    }
    for (const [index, piece] of fitted.samples.entries())
      await this.emit(piece, fitted.tokens[index] as number);
  }

  /** The threads that scan for the redactor (scan-thread.ts), when it takes their findings and threads are wanted. */
  private scanning(): ScanThreads | undefined {
    const redactor = this.settings.redactor;
    if (!redactor?.useScans) return undefined;
    const threads = ScanThreads.open(this.settings.scanThreads ?? 0);
    if (threads) redactor.useScans(threads);
    this.scan = threads;
    return threads;
  }

  /**
   * Every sample of `source`, in order. With scanning threads, each sample's texts are sent to them while up to
   * AHEAD_SAMPLES samples (AHEAD_CHARS of their text) before it are still to be taken, so their findings are in
   * by the time it is redacted.
   */
  private async takeAll(source: Iterable<Built>): Promise<void> {
    const threads = this.scan;
    if (!threads) {
      for (const built of source) await this.take(built);
      return;
    }
    const queue: { built: Built; seq: number; chars: number }[] = [];
    let chars = 0;
    const takeFirst = async () => {
      const first = queue.shift() as (typeof queue)[number];
      chars -= first.chars;
      threads.taking(first.seq);
      try {
        await this.take(first.built);
      } finally {
        threads.release(first.seq);
      }
    };
    for (const built of source) {
      const texts = 'skip' in built ? [] : sampleTexts(built.sample);
      let size = 0;
      for (const text of texts) size += text.length;
      queue.push({ built, seq: threads.ahead(texts), chars: size });
      chars += size;
      while (queue.length > AHEAD_SAMPLES || chars > AHEAD_CHARS) await takeFirst();
    }
    while (queue.length > 0) await takeFirst();
  }

  /**
   * The thread that counts for the report, when nothing written depends on the counts (no --max-tokens) and they
   * are in o200k; undefined: counted here.
   */
  private counter(): CountThread | undefined {
    if (this.thread === null)
      this.thread =
        this.settings.maxTokens === undefined && (this.settings.measure ?? o200k) === o200k
          ? CountThread.open()
          : undefined;
    return this.thread;
  }

  /**
   * The row's length (and, if it was written, its tokens for the report) counted on the thread: its texts are
   * collected by running the same functions with a counter that only notes them, and the same functions run
   * again on their counts when they come back, so the figures are those of counting here.
   */
  private async later(thread: CountThread, sample: Sample, written: boolean): Promise<void> {
    const texts: string[] = [];
    const note: Count = (text) => {
      texts.push(text);
      return 0;
    };
    sampleTokens(sample, note);
    if (written) tokens(sample, note);
    await thread.add(texts, (counts, at) => {
      let next = at;
      const counted: Count = () => counts[next++] as number;
      const length = sampleTokens(sample, counted);
      this.before.push(length);
      if (!written) return;
      const figures = tokens(sample, counted);
      this.report.tokens.total += figures.total;
      this.report.tokens.trained += figures.trained;
      this.after.push(length);
    });
  }

  /**
   * One sample of the output: rendered, checked for a duplicate, written to its side, counted. `length`: its
   * tokens as fitted to --max-tokens; without it, counted here or on the thread.
   */
  private async emit(sample: Sample, fitted?: number): Promise<void> {
    const thread = fitted === undefined ? this.counter() : undefined;
    let length = fitted;
    if (length === undefined && !thread) {
      length = sampleTokens(sample, this.count);
      this.before.push(length);
    }
    const rendered = this.settings.format.render(sample);
    if ('skip' in rendered) {
      this.skip(`${this.settings.format.name}: ${rendered.skip}`);
      if (thread) await this.later(thread, sample, false);
      return;
    }
    for (const warning of rendered.warnings ?? []) bump(this.report.warnings, warning);
    // Exact duplicates by the canonical form of what would be written (16 bytes each, kept for the run).
    const { line, digest } = this.rows.serialise(rendered.row);
    // U+2028/U+2029 are valid inside JSON strings but split lines for readers like Python's str.splitlines().
    const row = line.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
    if (this.seen.has(digest)) {
      this.report.duplicates++;
      if (thread) await this.later(thread, sample, false);
      return;
    }
    this.seen.add(digest);
    const side: Side =
      this.settings.split === undefined
        ? 'train'
        : sideOf(sample.session, this.settings.seed, this.settings.split);
    await this.write(row, side);
    if (thread) await this.later(thread, sample, true);
    else {
      const counted = tokens(sample, this.count);
      this.report.tokens.total += counted.total;
      this.report.tokens.trained += counted.trained;
      this.after.push(length as number);
    }
    this.report.samples.written++;
    this.report.samples[side]++;
  }

  /** Every stored session's original turns. */
  async fromStore(sessions: SessionStore, onSession?: (done: number, total: number) => void): Promise<void> {
    const ids = sessions.allIds({ branches: this.settings.branches === true });
    const learn = this.settings.redactor?.learnNames?.bind(this.settings.redactor);
    await this.finishing(async () => {
      // First pass: the people's names of every session, so that a name learned in the last one is redacted in the
      // first.
      if (learn)
        for (const id of ids) {
          learn(sessions.row(id)?.cwd ?? '');
          learn(sessions.messages(id));
        }
      await this.takeAll(this.storeSamples(sessions, ids, onSession));
    });
  }

  private *storeSamples(
    sessions: SessionStore,
    ids: readonly string[],
    onSession?: (done: number, total: number) => void,
  ): Generator<Built> {
    let done = 0;
    for (const id of ids) {
      onSession?.(++done, ids.length);
      const row = sessions.row(id);
      if (!row) continue;
      this.report.sessions++;
      if (row.turn_count < this.settings.minTurns) {
        this.skip(`fewer than ${this.settings.minTurns} model turns`);
        continue;
      }
      const loaded = sessions.load(id);
      if (!loaded) continue;
      // The requests Claude Code recorded (2.1.3xx): each turn is offered the tools its request offered.
      const requests =
        loaded.session.agent === 'claude-code'
          ? sessions.loadRequests(id, loaded.session.messages).byResponse
          : undefined;
      yield* fromSession(loaded.session, loaded.own, this.buildOptions(loaded.session.agent), requests);
    }
  }

  /** A replay run's pairs (its pairs file, only the lines of this run); failed turns are counted, not written. */
  async fromRun(run: RunRow, runs: RunStore, sessions: SessionStore): Promise<void> {
    if (!existsSync(run.out_file)) throw new Error(`the pairs file of ${run.id} is gone: ${run.out_file}`);
    const figures = runs.figures(run.id);
    if (figures.turnsFailed > 0) this.skip('failed replay turn', figures.turnsFailed);
    const short = new Set<string>();
    const sessionIds = runs.sessions(run.id);
    this.report.sessions = sessionIds.length;
    for (const id of sessionIds) {
      const row = sessions.row(id);
      if (row && row.turn_count < this.settings.minTurns) short.add(id);
    }
    const dpo = this.settings.format.name === 'dpo';
    const learn = this.settings.redactor?.learnNames?.bind(this.settings.redactor);
    await this.finishing(async () => {
      // First pass: the people's names of every pair (lines that cannot be read are said by the second pass).
      if (learn) for (const { pair } of pairLines(run, () => {})) learn(pair);
      await this.takeAll(
        run.mode === 'free' && this.settings.unit === 'session' && !dpo
          ? this.freeSessions(run, short)
          : this.runSamples(run, short, dpo),
      );
    });
  }

  private *runSamples(run: RunRow, short: ReadonlySet<string>, dpo: boolean): Generator<Built> {
    for (const { pair } of pairLines(run, this.badLine)) {
      if (short.has(pair.session)) {
        this.skip(`fewer than ${this.settings.minTurns} model turns`);
        continue;
      }
      yield dpo
        ? preferenceFromPair(pair, this.settings.includeInjected)
        : fromPair(pair, this.buildOptions(pair.agent as Sample['agent']));
    }
  }

  /**
   * Free mode, one sample per session: its last pair holds the whole conversation. A first pass notes where each
   * session's first and last pairs are (offsets only), the second reads just those lines.
   */
  private *freeSessions(run: RunRow, short: ReadonlySet<string>): Generator<Built> {
    const where = new Map<
      string,
      { opening: number; firstTurn: number; last: { start: number; end: number; turn: number } }
    >();
    for (const { pair, start, end } of pairLines(run, this.badLine)) {
      const known = where.get(pair.session);
      if (!known) {
        where.set(pair.session, {
          opening: pair.messages.length,
          firstTurn: pair.turn,
          last: { start, end, turn: pair.turn },
        });
        continue;
      }
      if (pair.turn < known.firstTurn) {
        known.firstTurn = pair.turn;
        known.opening = pair.messages.length;
      }
      if (pair.turn > known.last.turn) known.last = { start, end, turn: pair.turn };
    }
    const fd = openSync(run.out_file, 'r');
    try {
      for (const [session, place] of where) {
        if (short.has(session)) {
          this.skip(`fewer than ${this.settings.minTurns} model turns`);
          continue;
        }
        const buffer = Buffer.alloc(place.last.end - place.last.start);
        readSync(fd, buffer, 0, buffer.length, place.last.start);
        const pair = JSON.parse(buffer.toString('utf8')) as Pair;
        yield fromPair(pair, this.buildOptions(pair.agent as Sample['agent']), place.opening);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Every sample taken, then the report completed (the counts of the thread waited for). */
  private async finishing(takeAll: () => Promise<void>): Promise<void> {
    // The counting and scanning threads start before the first row (their start and the loading of their modules
    // overlap the names pass and the first sessions instead of holding up the first rows).
    this.counter();
    const scanning = this.scanning();
    try {
      await takeAll();
    } catch (error) {
      this.thread?.abandon();
      this.thread = undefined;
      throw error;
    } finally {
      this.settings.redactor?.useScans?.(undefined);
      this.scan = undefined;
      await scanning?.end();
    }
    const failure = scanning?.failure;
    if (failure)
      bump(
        this.report.warnings,
        `a scanning thread stopped (${failure.message}): its texts were scanned on the main thread`,
      );
    await this.thread?.finish();
    this.thread = undefined;
    if (this.settings.redactor) this.report.redactions = this.settings.redactor.counts();
    this.report.length.before = spread(this.before);
    this.report.length.after = spread(this.after);
  }
}

function* pairLines(
  run: RunRow,
  onBad: (line: number, why: string) => void,
): Generator<{ pair: Pair; start: number; end: number }> {
  for (const line of readLines(run.out_file)) {
    if (!line.terminated) {
      onBad(line.number, 'a torn last line (an interrupted run)');
      continue;
    }
    let pair: Pair;
    try {
      pair = JSON.parse(line.text) as Pair;
    } catch {
      onBad(line.number, 'not JSON');
      continue;
    }
    if (pair.run === run.id) yield { pair, start: line.start, end: line.end };
  }
}
