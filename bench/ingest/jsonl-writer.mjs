// Writing a generated JSON-lines corpus: lines buffered and flushed by the megabyte, per-kind line and byte
// counts kept in the corpus stats (which count `files`, `hugeLines` and `largestFile` too).

import { closeSync, fsyncSync, mkdirSync, openSync, utimesSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const MB = 1e6;

export class JsonlWriter {
  constructor(path, stats) {
    mkdirSync(join(path, '..'), { recursive: true });
    this.path = path;
    this.fd = openSync(path, 'w');
    this.stats = stats;
    this.parts = [];
    this.pending = 0;
    this.bytes = 0;
    stats.files++;
  }
  writeJson(kind, value) {
    this.write(kind, JSON.stringify(value));
  }

  /** One line, already serialised. */
  write(kind, text) {
    const line = `${text}\n`;
    const n = Buffer.byteLength(line);
    if (n > MB) this.stats.hugeLines++;
    this.parts.push(line);
    this.pending += n;
    this.bytes += n;
    this.stats.add(kind, n);
    if (this.pending >= 1 << 20) this.flush();
  }
  flush() {
    if (this.parts.length === 0) return;
    writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.pending = 0;
  }
  /** mtime = the last timestamp written, so the files look like a real history (and stat is reproducible). */
  close(mtimeMs) {
    this.flush();
    // On disk before anything is timed: write-back of a fresh corpus would otherwise run during the first
    // measurement and slow it down.
    fsyncSync(this.fd);
    closeSync(this.fd);
    const t = new Date(mtimeMs);
    utimesSync(this.path, t, t);
    this.stats.largestFile = Math.max(this.stats.largestFile, this.bytes);
  }
}
