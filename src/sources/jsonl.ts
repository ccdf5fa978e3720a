import { closeSync, openSync, readSync } from 'node:fs';
import { readLines } from './lines.js';
import type { Warning } from './types.js';

export interface JsonLinesRead {
  /** Lines read (a torn last line not counted), lines skipped, and where the next incremental read starts. */
  lines: number;
  skipped: number;
  parsedBytes: number;
  /** The number of the line that starts at parsedBytes: where a read continued from there counts from. */
  nextLine: number;
}

/**
 * Reads every line of a JSON-lines log and hands each parsed value to `take`, which returns a reason when the
 * value is not a record of its format (the line is then skipped and reported). Bad lines — invalid JSON, too
 * long, invalid UTF-8 — are reported with file:line and the reading goes on; an unterminated last line that
 * does not parse is a line still being written, left for the next ingest.
 */
export function readJsonLines(
  file: string,
  warnings: Warning[],
  take: (value: unknown, line: number, index: number) => string | undefined,
  /** Where to start: a byte offset at the start of a line, and that line's number. */
  from: { offset: number; line: number } = { offset: 0, line: 1 },
): JsonLinesRead {
  let lines = 0;
  let skipped = 0;
  let parsedBytes = from.offset;
  let nextLine = from.line;
  const onOversize = ({ number, bytes }: { number: number; bytes: number }): void => {
    skipped++;
    warnings.push({ file, line: number, message: `line of ${bytes} bytes is over the size limit; skipped` });
  };
  for (const line of readLines(file, { onOversize, from: from.offset, firstLine: from.line })) {
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (error) {
      if (!line.terminated) {
        warnings.push({
          file,
          line: line.number,
          message: 'last line is incomplete (still being written?); not read yet',
        });
        break;
      }
      lines++;
      skipped++;
      warnings.push({
        file,
        line: line.number,
        message: `not valid JSON (${(error as Error).message}); skipped`,
      });
      parsedBytes = line.end;
      nextLine = line.number + 1;
      continue;
    }
    lines++;
    parsedBytes = line.end;
    nextLine = line.number + 1;
    // The text is not needed once parsed. Let go of it before the reader takes the value: a line of megabytes
    // (held as UTF-16 when it has one character past Latin-1) is then not kept beside what it parsed into.
    line.text = '';
    if (line.invalidUtf8)
      warnings.push({ file, line: line.number, message: 'invalid UTF-8 replaced with U+FFFD' });
    const rejected = take(value, line.number, lines - 1);
    if (rejected !== undefined) {
      skipped++;
      warnings.push({ file, line: line.number, message: `${rejected}; skipped` });
    }
  }
  return { lines, skipped, parsedBytes, nextLine };
}

/** Heads already read while one file's format is detected, by size and path (see withHeads). */
let heads: Map<string, string> | undefined;

/**
 * Runs `fn` (the detection of one file) with each head read once: every detector asks for the same first bytes,
 * and reading and decoding them once per detector cost 5 % of an ingest (issue 21).
 */
export function withHeads<T>(fn: () => T): T {
  const outer = heads;
  heads = new Map();
  try {
    return fn();
  } finally {
    heads = outer;
  }
}

/** The first bytes of a file as text, for cheap format detection. */
export function readHead(file: string, bytes = 64 * 1024): string {
  const key = `${bytes}:${file}`;
  const known = heads?.get(key);
  if (known !== undefined) return known;
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    const head = buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0)).toString('utf8');
    heads?.set(key, head);
    return head;
  } finally {
    closeSync(fd);
  }
}
