import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Pair, PairsFileError, PairsWriter, unwritten } from '../../src/replay/pairs.js';
import { tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let file: string;
beforeEach(() => {
  dir = tempDir();
  file = join(dir.path, 'pairs.jsonl');
});
afterEach(() => dir.remove());

const pair = (run: string, session: string, turn: number): Pair => ({
  schema: 'replay-history.pair/v1',
  run,
  session,
  agent: 'claude-code',
  turn,
  mode: 'forced',
  model: 'recorded',
  messages: [{ role: 'user', content: `question ${turn}` }],
  tools: [],
  completion: { role: 'assistant', content: `answer ${turn}` },
  original: { role: 'assistant', content: `answer ${turn}` },
  match: { tool_calls: 'none' },
  usage: { prompt_tokens: 1, completion_tokens: 1 },
  latency_ms: 0,
  finish_reason: 'stop',
});

describe('pairs file', () => {
  it('writes one whole JSON line per pair', () => {
    const { writer } = PairsWriter.open(file, 'new', 'r1');
    writer.write(pair('r1', 's', 1));
    writer.write(pair('r1', 's', 2));
    writer.close();
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[1] as string)).toEqual(pair('r1', 's', 2));
  });

  it('refuses to start a new run in a file that already holds pairs', () => {
    writeFileSync(file, `${JSON.stringify(pair('r0', 's', 1))}\n`);
    expect(() => PairsWriter.open(file, 'new', 'r1')).toThrow(PairsFileError);
    const { writer, done } = PairsWriter.open(file, 'append', 'r1');
    writer.close();
    expect(done.size).toBe(0);
  });

  it('on resume cuts a torn last line and reports the turns of this run already written', () => {
    const whole = [pair('r1', 's', 1), pair('r0', 's', 1), pair('r1', 't', 3)]
      .map((p) => JSON.stringify(p))
      .join('\n');
    writeFileSync(file, `${whole}\n${JSON.stringify(pair('r1', 's', 2)).slice(0, 50)}`);
    const seen: Pair[] = [];
    const { writer, done, cut } = PairsWriter.open(file, 'resume', 'r1', (p) => seen.push(p));
    expect(cut).toBe(50);
    expect([...done].sort()).toEqual(['s#1', 't#3']);
    expect(seen.map((p) => `${p.session}#${p.turn}`)).toEqual(['s#1', 't#3']);
    writer.write(pair('r1', 's', 2));
    writer.close();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).turn)).toEqual([1, 1, 3, 2]);
  });

  it('refuses to resume into a file with a corrupt line in the middle, naming the line', () => {
    writeFileSync(
      file,
      `${JSON.stringify(pair('r1', 's', 1))}\n{not json\n${JSON.stringify(pair('r1', 's', 2))}\n`,
    );
    expect(() => PairsWriter.open(file, 'resume', 'r1')).toThrow(`${file}:2: not a valid pair line`);
  });

  it('a file of only a torn line is emptied', () => {
    appendFileSync(file, '{"schema":"replay-history.pair/v1","run":"r1"');
    const { writer, cut } = PairsWriter.open(file, 'resume', 'r1');
    writer.close();
    expect(cut).toBeGreaterThan(0);
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});

describe('pairs file, written in pieces', () => {
  // A line is written as its pieces (the shared lists' and messages' bytes) with one gathering write.
  const wide = (turn: number, blocks: number): Pair => ({
    ...pair('r1', 's', turn),
    schema: 'replay-history.pair/v2',
    wire: {
      api: 'anthropic-messages',
      source: 'conversation',
      body: {
        max_tokens: 1,
        system: 'be brief',
        tools: [],
        messages: [
          {
            role: 'user',
            content: Array.from({ length: blocks }, (_, i) => ({
              type: 'text',
              text: `block ${i} ü 😀 ${'x'.repeat(i % 7)}`,
            })),
          },
        ],
      },
      betas: [],
    },
  });

  it('writes a line of more pieces than one writev takes (IOV_MAX is 1,024) whole and in order', () => {
    const { writer } = PairsWriter.open(file, 'new', 'r1');
    const pairs = [wide(1, 3000), wide(2, 5), wide(3, 1500)];
    for (const p of pairs) writer.write(p);
    writer.close();
    expect(readFileSync(file, 'utf8')).toBe(pairs.map((p) => `${JSON.stringify(p)}\n`).join(''));
  });

  it('continues a short write from the first byte not written, at every offset', () => {
    const pieces = ['{"a":', '', '"ü😀"', ',', '"b":[1,2,3]', '}'].map((text) => Buffer.from(text));
    const all = Buffer.concat(pieces);
    for (let written = 0; written <= all.length; written++) {
      expect(Buffer.concat(unwritten(pieces, written) as Buffer[]).equals(all.subarray(written))).toBe(true);
    }
    expect(unwritten(pieces, all.length)).toEqual([]);
  });

  const small = join('/tmp', `replay-history-full-${process.pid}`);
  const mounted = (() => {
    if (process.getuid?.() !== 0) return false;
    mkdirSync(small, { recursive: true });
    const made = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small]);
    if (made.status !== 0) rmSync(small, { recursive: true, force: true });
    return made.status === 0;
  })();
  afterAll(() => {
    if (!mounted) return;
    spawnSync('umount', [small]);
    rmSync(small, { recursive: true, force: true });
  });

  it.skipIf(!mounted)(
    'on a full disk raises ENOSPC at the line that did not fit; a resume cuts what was written of it',
    () => {
      const target = join(small, 'pairs.jsonl');
      const { writer } = PairsWriter.open(target, 'new', 'r1');
      const written: Pair[] = [];
      let failure: NodeJS.ErrnoException | undefined;
      for (let turn = 1; turn <= 100 && !failure; turn++) {
        const next = wide(turn, 400);
        try {
          writer.write(next);
          written.push(next);
        } catch (error) {
          failure = error as NodeJS.ErrnoException;
        }
      }
      writer.close();
      expect(failure?.code).toBe('ENOSPC');
      // The disk took part of the last line (a short write, continued until the disk refused).
      const whole = written.map((p) => `${JSON.stringify(p)}\n`).join('');
      const held = readFileSync(target, 'utf8');
      expect(held.startsWith(whole)).toBe(true);
      expect(held.length).toBeGreaterThan(whole.length);
      const resumed = PairsWriter.open(target, 'resume', 'r1');
      resumed.writer.close();
      expect(resumed.cut).toBe(Buffer.byteLength(held) - Buffer.byteLength(whole));
      expect(readFileSync(target, 'utf8')).toBe(whole);
      expect(resumed.done.size).toBe(written.length);
    },
  );
});
