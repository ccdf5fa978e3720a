import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OversizeLine, readLines } from '../../src/sources/lines.js';
import { tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const write = (content: string | Buffer) => {
  const file = join(dir.path, 'f.jsonl');
  writeFileSync(file, content);
  return file;
};

describe('readLines', () => {
  it('numbers lines, skips empty ones, tolerates CRLF, and marks an unterminated last line', () => {
    const file = write('a\r\n\nbb\nccc');
    const lines = [...readLines(file)].map(({ number, start, end, text, terminated }) => ({
      number,
      start,
      end,
      text,
      terminated,
    }));
    expect(lines).toEqual([
      { number: 1, start: 0, end: 3, text: 'a', terminated: true },
      { number: 3, start: 4, end: 7, text: 'bb', terminated: true },
      { number: 4, start: 7, end: 10, text: 'ccc', terminated: false },
    ]);
  });

  it('joins lines that span read chunks, multi-byte characters split across them included', () => {
    // 1 MiB chunks: put a 3-byte character right across the first boundary, and a 3 MiB line after it.
    const first = `${'x'.repeat(1024 * 1024 - 1)}€`;
    const second = 'é'.repeat(1.5 * 1024 * 1024);
    const file = write(`${first}\n${second}\nend\n`);
    const lines = [...readLines(file)];
    expect(lines.map((l) => l.text.length)).toEqual([first.length, second.length, 3]);
    expect(lines[0]?.text.endsWith('€')).toBe(true);
    expect(lines[1]?.text).toBe(second);
    expect(lines.every((l) => !l.invalidUtf8)).toBe(true);
    expect(lines[2]?.start).toBe(Buffer.byteLength(`${first}\n${second}\n`));
  });

  it('replaces invalid UTF-8 and says so', () => {
    const file = write(Buffer.from([0x61, 0xff, 0x62, 0x0a]));
    const [line] = [...readLines(file)];
    expect(line).toMatchObject({ text: 'a\uFFFDb', invalidUtf8: true });
  });

  it('skips a line over the size limit without holding it, and reports where it was', () => {
    const file = write(`short\n${'y'.repeat(5000)}\nafter\n`);
    const oversize: OversizeLine[] = [];
    const lines = [...readLines(file, { maxBytes: 1000, onOversize: (line) => oversize.push(line) })];
    expect(lines.map((l) => [l.number, l.text])).toEqual([
      [1, 'short'],
      [3, 'after'],
    ]);
    expect(oversize).toEqual([{ number: 2, start: 6, end: 5007, bytes: 5000 }]);
  });

  it('starts from a byte offset with the right line number', () => {
    const file = write('one\ntwo\nthree\n');
    expect([...readLines(file, { from: 4, firstLine: 2 })].map((l) => [l.number, l.text])).toEqual([
      [2, 'two'],
      [3, 'three'],
    ]);
  });
});
