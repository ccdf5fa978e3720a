// Reads a SQLite file's table list straight from its pages (https://sqlite.org/fileformat2.html), without
// SQLite. detect() must touch nothing: opening a file through SQLite, even read-only, takes locks and creates a
// -shm file beside a WAL database. Only the main file is read, so a schema still only in the -wal is not seen.

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isSqliteHeader } from '../sqlite.js';

const headerSize = 100;
/** A schema larger than this many pages is not a schema. */
const pageLimit = 10_000;

/** The file is SQLite but its schema cannot be read: truncated, half-written or corrupt. */
export class SchemaError extends Error {}

export interface SqliteShape {
  /** WAL mode (header bytes 18–19 are 2): the latest state may be in the -wal file. */
  wal: boolean;
  /** Table name → its CREATE TABLE statement. */
  tables: Map<string, string>;
}

/** The schema of a SQLite file; undefined when the file is not SQLite at all. */
export function readShape(file: string): SqliteShape | undefined {
  const fd = openSync(file, 'r');
  try {
    const pages = new Pages(fd);
    if (!pages.open()) return undefined;
    return { wal: pages.wal, tables: pages.tables() };
  } catch (error) {
    // Offsets read from a damaged page point outside it: that is corruption, not a bug.
    if (error instanceof RangeError) throw new SchemaError(`the schema is corrupt (${error.message})`);
    throw error;
  } finally {
    closeSync(fd);
  }
}

class Pages {
  wal = false;
  private pageSize = 0;
  private usable = 0;
  private encoding: 'utf8' | 'utf16le' | 'utf16be' = 'utf8';
  private readonly fileSize: number;
  private visited = 0;

  constructor(private readonly fd: number) {
    this.fileSize = fstatSync(fd).size;
  }

  open(): boolean {
    const head = Buffer.alloc(headerSize);
    const read = readSync(this.fd, head, 0, headerSize, 0);
    if (!isSqliteHeader(head.subarray(0, read))) return false;
    if (read < headerSize) throw new SchemaError('the file is truncated inside the SQLite header');
    const size = head.readUInt16BE(16);
    this.pageSize = size === 1 ? 65_536 : size;
    if (this.pageSize < 512 || (this.pageSize & (this.pageSize - 1)) !== 0)
      throw new SchemaError(`the header names an impossible page size (${size})`);
    this.usable = this.pageSize - (head[20] ?? 0);
    this.wal = head[18] === 2 || head[19] === 2;
    const encoding = head.readUInt32BE(56);
    this.encoding = encoding === 2 ? 'utf16le' : encoding === 3 ? 'utf16be' : 'utf8';
    return true;
  }

  /** Rows of sqlite_master whose type is 'table'. */
  tables(): Map<string, string> {
    const tables = new Map<string, string>();
    for (const row of this.rows(1, 0)) {
      if (row[0] === 'table' && typeof row[1] === 'string') tables.set(row[1], String(row[4] ?? ''));
    }
    return tables;
  }

  private page(number: number): Buffer {
    if (++this.visited > pageLimit) throw new SchemaError('the schema b-tree loops or is impossibly large');
    if (number < 1 || number * this.pageSize > this.fileSize)
      throw new SchemaError(`page ${number} of the schema lies past the end of the file (truncated?)`);
    const page = Buffer.alloc(this.pageSize);
    readSync(this.fd, page, 0, this.pageSize, (number - 1) * this.pageSize);
    return page;
  }

  /** The records of the table b-tree rooted at `number`, in key order. */
  private *rows(number: number, depth: number): Generator<unknown[]> {
    if (depth > 20) throw new SchemaError('the schema b-tree is impossibly deep');
    const page = this.page(number);
    const at = number === 1 ? headerSize : 0;
    const type = page[at];
    const cells = page.readUInt16BE(at + 3);
    if (type === 0x0d) {
      for (let i = 0; i < cells; i++) yield this.record(page, page.readUInt16BE(at + 8 + 2 * i));
    } else if (type === 0x05) {
      for (let i = 0; i < cells; i++)
        yield* this.rows(page.readUInt32BE(page.readUInt16BE(at + 12 + 2 * i)), depth + 1);
      yield* this.rows(page.readUInt32BE(at + 8), depth + 1);
    } else {
      throw new SchemaError(`page ${number} is not a table b-tree page`);
    }
  }

  /** One leaf cell: payload size, rowid, the payload (spilling onto overflow pages), decoded as a record. */
  private record(page: Buffer, start: number): unknown[] {
    let offset = start;
    const [size, sizeLength] = varint(page, offset);
    offset += sizeLength;
    offset += varint(page, offset)[1];
    if (size > this.pageSize * pageLimit) throw new SchemaError('a schema record has an impossible size');
    const local = this.localSize(size);
    if (offset + local > page.length) throw new SchemaError('a schema record runs past its page');
    const pieces = [page.subarray(offset, offset + local)];
    let remaining = size - local;
    let next = remaining > 0 ? page.readUInt32BE(offset + local) : 0;
    while (remaining > 0) {
      const overflow = this.page(next);
      const take = Math.min(remaining, this.usable - 4);
      pieces.push(overflow.subarray(4, 4 + take));
      remaining -= take;
      next = overflow.readUInt32BE(0);
    }
    return this.decode(Buffer.concat(pieces));
  }

  /** How much of a table-leaf payload is stored on the page itself (the rest overflows). */
  private localSize(size: number): number {
    const max = this.usable - 35;
    if (size <= max) return size;
    const min = Math.floor(((this.usable - 12) * 32) / 255) - 23;
    const spilled = min + ((size - min) % (this.usable - 4));
    return spilled <= max ? spilled : min;
  }

  private decode(payload: Buffer): unknown[] {
    const [headerLength, first] = varint(payload, 0);
    const types: number[] = [];
    for (let at = first; at < headerLength; ) {
      const [type, length] = varint(payload, at);
      types.push(type);
      at += length;
    }
    const values: unknown[] = [];
    let at = headerLength;
    for (const type of types) {
      const length = fieldLength(type);
      if (at + length > payload.length) throw new SchemaError('a schema record is cut short');
      values.push(this.value(type, payload.subarray(at, at + length)));
      at += length;
    }
    return values;
  }

  private value(type: number, bytes: Buffer): unknown {
    if (type === 0) return null;
    if (type >= 1 && type <= 6)
      return bytes.length === 8 ? Number(bytes.readBigInt64BE()) : bytes.readIntBE(0, bytes.length);
    if (type === 7) return bytes.readDoubleBE();
    if (type === 8 || type === 9) return type - 8;
    if (type % 2 === 0) return bytes;
    if (this.encoding === 'utf16be') return Buffer.from(bytes).swap16().toString('utf16le');
    return bytes.toString(this.encoding);
  }
}

const intLengths = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0];

function fieldLength(type: number): number {
  if (type < 10) return intLengths[type] ?? 0;
  if (type < 12) throw new SchemaError(`a schema record has a reserved field type (${type})`);
  return Math.floor((type - 12) / 2);
}

/** SQLite's big-endian varint: 7 bits a byte, up to 9 bytes (the 9th gives all 8 bits). */
function varint(buffer: Buffer, offset: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    const byte = buffer[offset + i];
    if (byte === undefined) throw new RangeError(`varint at ${offset} runs past the end`);
    if (i === 8) return [value * 256 + byte, 9];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  return [value, 9];
}
