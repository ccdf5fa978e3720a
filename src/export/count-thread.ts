// Token counts of an export without --max-tokens, on a thread of their own. Nothing the export writes depends on
// them, only its report (tokens, row lengths), so the main thread hands each row's texts over and goes on
// redacting, rendering and writing while they are counted; the report waits for the last counts. The worker
// counts with the same o200k counter and memo as the main thread would (tokenizer.ts), so the figures are the
// same. Bounded: at most `MAX_IN_FLIGHT` batches wait, then the export waits for the oldest.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { programFile } from '../paths.js';

/** A batch goes to the worker once it holds this many UTF-16 code units of text. */
const BATCH_CHARS = 500_000;
// Deep enough that the export does not wait while the thread starts and loads its ranks (the first batches queue
// up meanwhile) and smaller batches, so the wait for the last counts at the end is short: at most 6 M code
// units of text (and their rows) held.
const MAX_IN_FLIGHT = 12;

/** undefined under the tests, which run the sources: the export then counts on its main thread. */
const workerFile = programFile(import.meta.url, 'export/count-worker.js');

interface Batch {
  texts: string[];
  chars: number;
  /** per row: where its texts begin, and what to do with their counts */
  done: [number, (counts: Int32Array, at: number) => void][];
}

export class CountThread {
  private readonly worker: Worker;
  private batch: Batch = { texts: [], chars: 0, done: [] };
  /** posted batches, oldest first, each with its settling promise */
  private readonly waiting: { batch: Batch; settled: Promise<void> }[] = [];
  private readonly resolvers: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private failed: Error | undefined;
  private ended = false;

  /** The thread, or undefined where there is no compiled worker (the sources run under tests). */
  static open(): CountThread | undefined {
    return workerFile !== undefined && existsSync(workerFile) ? new CountThread(workerFile) : undefined;
  }

  private constructor(workerFile: string) {
    this.worker = new Worker(workerFile);
    this.worker.unref();
    this.worker.on('message', (counts: Int32Array) => {
      const posted = this.waiting[0];
      const settle = this.resolvers.shift();
      if (!posted || !settle) return;
      try {
        for (const [at, done] of posted.batch.done) done(counts, at);
        settle.resolve();
      } catch (error) {
        settle.reject(error as Error);
      }
      this.waiting.shift();
      if (this.waiting.length === 0) this.worker.unref();
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      if (!this.ended) this.fail(new Error(`the token-counting thread stopped (exit code ${code})`));
    });
  }

  /** Counts `texts` (in order) and calls `done` with them and where they begin; may wait for older batches. */
  async add(texts: string[], done: (counts: Int32Array, at: number) => void): Promise<void> {
    if (this.failed) throw this.failed;
    this.batch.done.push([this.batch.texts.length, done]);
    for (const text of texts) {
      this.batch.texts.push(text);
      this.batch.chars += text.length;
    }
    if (this.batch.chars < BATCH_CHARS) return;
    this.post();
    if (this.waiting.length > MAX_IN_FLIGHT) await this.waiting[0]?.settled;
  }

  /** Every count in; the thread ended. */
  async finish(): Promise<void> {
    try {
      if (this.batch.done.length > 0) this.post();
      for (const posted of [...this.waiting]) await posted.settled;
      if (this.failed) throw this.failed;
    } finally {
      this.ended = true;
      await this.worker.terminate();
    }
  }

  /** The thread ended without waiting for its counts (the export failed). */
  abandon(): void {
    this.ended = true;
    void this.worker.terminate();
  }

  private fail(error: Error): void {
    this.failed ??= error;
    for (const settle of this.resolvers.splice(0)) settle.reject(error);
  }

  private post(): void {
    const batch = this.batch;
    this.batch = { texts: [], chars: 0, done: [] };
    const settled = new Promise<void>((resolve, reject) => this.resolvers.push({ resolve, reject }));
    // a failure is seen by whoever awaits it (add, finish); none left unhandled meanwhile
    settled.catch(() => {});
    this.waiting.push({ batch, settled });
    this.worker.ref();
    this.worker.postMessage(batch.texts);
  }
}
