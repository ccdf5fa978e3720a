import { isUtf8 } from 'node:buffer';
import { closeSync, openSync, readSync } from 'node:fs';

/** One line of a JSON-lines file, with where it is. */
export interface Line {
  /** 1-based line number. */
  number: number;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the line's newline (or past its last byte if it has none). */
  end: number;
  text: string;
  /** Bytes that were not valid UTF-8 were replaced by U+FFFD. */
  invalidUtf8: boolean;
  /** Ended by a newline; a last line without one may still be being written. */
  terminated: boolean;
}

/** A line longer than this is skipped whole (reported), not held: V8 strings top out near 512 MiB. */
export const maxLineBytes = 256 * 1024 * 1024;

export interface OversizeLine {
  number: number;
  start: number;
  end: number;
  bytes: number;
}

const chunkSize = 1024 * 1024;
const lenient = new TextDecoder('utf-8');

function decode(bytes: Buffer): { text: string; invalid: boolean } {
  // isUtf8 is a native check; toString is the fast path for the (almost always) valid case.
  if (isUtf8(bytes)) return { text: bytes.toString('utf8'), invalid: false };
  return { text: lenient.decode(bytes), invalid: true };
}

/**
 * Reads a file line by line from a byte offset, with constant memory apart from the current line. Empty lines
 * are skipped (but counted). Lines over `maxLineBytes` are reported through `onOversize` and skipped.
 */
export function* readLines(
  path: string,
  options: {
    from?: number;
    firstLine?: number;
    maxBytes?: number;
    onOversize?: (line: OversizeLine) => void;
  } = {},
): Generator<Line> {
  const limit = options.maxBytes ?? maxLineBytes;
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkSize);
    let position = options.from ?? 0;
    let number = options.firstLine ?? 1;
    let pieces: Buffer[] = [];
    let pending = 0;
    let lineStart = position;
    let oversize = false;

    const emit = (terminated: boolean, end: number): Line | undefined => {
      const current = number;
      const start = lineStart;
      number++;
      lineStart = end;
      if (oversize) {
        options.onOversize?.({ number: current, start, end, bytes: pending });
        oversize = false;
        pieces = [];
        pending = 0;
        return undefined;
      }
      const bytes = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces, pending);
      pieces = [];
      const length = pending;
      pending = 0;
      // Tolerate CRLF files.
      const body = length > 0 && bytes[length - 1] === 13 ? bytes.subarray(0, length - 1) : bytes;
      if (body.length === 0) return undefined;
      // Built field by field: a spread per line was 2 % of a Claude Code ingest (issue 21).
      const { text, invalid } = decode(body);
      return { number: current, start, end, text, invalidUtf8: invalid, terminated };
    };

    for (;;) {
      const read = readSync(fd, buffer, 0, chunkSize, position);
      if (read === 0) break;
      let from = 0;
      while (from < read) {
        const newline = buffer.indexOf(10, from);
        const stop = newline === -1 || newline >= read ? read : newline;
        const size = stop - from;
        if (!oversize && pending + size > limit) {
          oversize = true;
          pieces = [];
        }
        // A line that ends in this chunk is decoded before the chunk is reused, so it needs no copy; a piece
        // of a line that goes on past the chunk does.
        if (!oversize && size > 0) {
          const piece = buffer.subarray(from, stop);
          pieces.push(stop === read ? Buffer.from(piece) : piece);
        }
        pending += size;
        if (stop === read) break;
        const line = emit(true, position + stop + 1);
        if (line) yield line;
        from = stop + 1;
      }
      position += read;
    }
    if (pending > 0 || oversize) {
      const line = emit(false, position);
      if (line) yield line;
    }
  } finally {
    closeSync(fd);
  }
}
