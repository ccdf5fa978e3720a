import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Pair, PairsFileError, PairsWriter } from '../../src/replay/pairs.js';
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
