// The rules' scan of redaction (redact/scanner.ts), on threads of their own. It is most of redaction's time and
// depends on the text alone, so the export sends each sample's texts ahead, while it still builds and writes the
// samples before it, and the Redactor takes the findings that came back instead of scanning those texts itself.
// What stays on the main thread is what depends on the export's order: learned values, names, placeholders.
//
// The main thread never waits for a thread: before each sample it collects the answers that are in (without the
// event loop: `receiveMessageOnPort`), and a text whose findings are not in is scanned there, as without threads.
// The output is the same either way (same Scanner, same findings in the same order); only where the work is done
// changes. A thread that is behind skips the samples the main thread has already taken (a shared counter), and
// one that fails is left: its texts are scanned on the main thread, and the report says so.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { programFile } from '../paths.js';
import type { Scans } from './redact.js';
import type { Finding } from './rules.js';

/** undefined under the tests, which run the sources: the export then scans on its main thread. */
const workerFile = programFile(import.meta.url, 'export/scan-worker.js');

/** What a thread answers for one sample's new texts: their findings in order (null: none). */
export interface Answer {
  seq: number;
  found: (Finding[] | null)[];
}

/** What a thread is sent: one sample's texts not already sent (it also has `progress`, the shared counter). */
export interface Ask {
  seq: number;
  texts: string[];
}

interface Held {
  /** undefined until the thread's answer is in */
  found: readonly Finding[] | undefined;
  /** the last sample sent that holds the text: it is let go when that sample is taken */
  last: number;
}

interface Thread {
  worker: Worker;
  port: MessagePort;
  failed?: Error;
}

const NONE: readonly Finding[] = Object.freeze([]);

/** How many scanning threads, from `REPLAY_HISTORY_SCAN_THREADS` or the machine: one per core beyond the main thread's, at most 4. */
export function scanThreadCount(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.REPLAY_HISTORY_SCAN_THREADS;
  if (given !== undefined && /^\d+$/.test(given.trim())) return Math.min(Number(given), 16);
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export class ScanThreads implements Scans {
  private readonly threads: Thread[] = [];
  /** the last sample the main thread began to take: threads skip samples up to it */
  private readonly progress = new Int32Array(new SharedArrayBuffer(4));
  private readonly held = new Map<string, Held>();
  /** per sample sent ahead: every text it holds (to let go), and the texts asked for in its message */
  private readonly samples = new Map<number, { texts: readonly string[]; asked: string[] }>();
  private seq = 0;
  private turn = 0;
  private ended = false;

  /** `count` threads, or undefined for none or where there is no compiled worker (the sources run under tests). */
  static open(count: number): ScanThreads | undefined {
    return count > 0 && workerFile !== undefined && existsSync(workerFile)
      ? new ScanThreads(count, workerFile)
      : undefined;
  }

  private constructor(count: number, workerFile: string) {
    for (let i = 0; i < count; i++) {
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(workerFile, {
        workerData: { port: port2, progress: this.progress },
        transferList: [port2],
      });
      worker.unref();
      const thread: Thread = { worker, port: port1 };
      worker.on('error', (error) => {
        thread.failed ??= error;
      });
      worker.on('exit', (code) => {
        if (!this.ended) thread.failed ??= new Error(`exit code ${code}`);
      });
      this.threads.push(thread);
    }
  }

  /** The first failure of a thread, if any: its texts were scanned on the main thread. */
  get failure(): Error | undefined {
    return this.threads.find((thread) => thread.failed)?.failed;
  }

  /** Sends a sample's texts ahead (those not already held); the sample's number, for `taking` and `release`. */
  ahead(texts: readonly string[]): number {
    const seq = ++this.seq;
    const asked: string[] = [];
    for (const text of texts) {
      if (text === '') continue;
      const held = this.held.get(text);
      if (held) held.last = seq;
      else {
        this.held.set(text, { found: undefined, last: seq });
        asked.push(text);
      }
    }
    this.samples.set(seq, { texts, asked });
    const live = this.threads.filter((thread) => !thread.failed);
    const thread = live[this.turn++ % Math.max(1, live.length)];
    if (asked.length > 0 && thread) thread.port.postMessage({ seq, texts: asked } satisfies Ask);
    return seq;
  }

  /** The main thread begins to take sample `seq`: the answers in so far are collected, threads skip up to it. */
  taking(seq: number): void {
    Atomics.store(this.progress, 0, seq);
    for (const thread of this.threads)
      for (
        let message = receiveMessageOnPort(thread.port);
        message;
        message = receiveMessageOnPort(thread.port)
      )
        this.answer(message.message as Answer);
  }

  /** Sample `seq` was taken: the texts no later sample holds are let go. */
  release(seq: number): void {
    const sample = this.samples.get(seq);
    if (!sample) return;
    this.samples.delete(seq);
    for (const text of sample.texts) {
      const held = this.held.get(text);
      if (held && held.last === seq) this.held.delete(text);
    }
  }

  /** The findings of a text, when a thread's answer for it is in (or the main thread scanned it). */
  get(text: string): readonly Finding[] | undefined {
    return this.held.get(text)?.found;
  }

  /**
   * Findings the main thread made, for a text no answer was in for: later samples holding it take them (a text
   * is asked for once while held, so without this they would all scan it again if its sample was skipped).
   */
  put(text: string, found: readonly Finding[]): void {
    const held = this.held.get(text);
    if (held && held.found === undefined) held.found = found;
  }

  /** The threads ended (at the end of the export, or when it failed). */
  async end(): Promise<void> {
    this.ended = true;
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
  }

  private answer(answer: Answer): void {
    const sample = this.samples.get(answer.seq);
    if (!sample) return;
    sample.asked.forEach((text, i) => {
      const held = this.held.get(text);
      if (held && held.found === undefined) held.found = answer.found[i] ?? NONE;
    });
  }
}
