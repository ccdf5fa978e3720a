import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync, type WriteStream } from 'node:fs';
import type { Writable } from 'node:stream';

/**
 * Where rows go: a file, written under a temporary name and renamed into place when complete (a killed export
 * leaves no half dataset under the real name), or stdout. Writes wait for the stream to drain, so memory stays flat
 * however fast rows are made and however slow the reader is.
 */
export class Sink {
  private readonly stream: Writable;
  private readonly temporary?: string;
  rows = 0;
  bytes = 0;
  /** A write failed (a full disk): every later write throws it. */
  private failure: Error | undefined;

  constructor(readonly file?: string) {
    if (file) {
      this.temporary = `${file}.${process.pid}.tmp`;
      this.stream = createWriteStream(this.temporary, { flags: 'w' });
    } else this.stream = process.stdout;
    this.stream.on('error', (error: Error) => {
      this.failure ??= error;
    });
  }

  async write(row: string): Promise<void> {
    if (this.failure) throw this.failure;
    const line = `${row}\n`;
    this.rows++;
    this.bytes += Buffer.byteLength(line);
    if (!this.stream.write(line)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    if (!this.temporary || !this.file) return;
    const stream = this.stream as WriteStream;
    if (this.failure) throw this.failure;
    await new Promise<void>((resolve, reject) => {
      stream.once('error', reject);
      stream.end(() => resolve());
    });
    if (this.failure) throw this.failure;
    renameSync(this.temporary, this.file);
  }

  /** Gives up: the temporary file goes, the real name is left as it was. */
  abandon(): void {
    if (!this.temporary) return;
    (this.stream as WriteStream).destroy();
    rmSync(this.temporary, { force: true });
  }
}
