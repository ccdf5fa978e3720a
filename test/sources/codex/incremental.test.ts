// A rollout that grew is read from where the last ingest stopped when its new lines only continue the thread,
// and read again whole otherwise. Either way the store (and the state kept to continue) must be what one full
// read of the whole file makes: every Codex fixture, cut after each line (and inside a line, as a line still
// being written) and then grown back, is compared row for row with a fresh full read.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../../helpers/cli.js';
import {
  cutThenWhole,
  fullRead,
  growThrough,
  lineEnds,
  logFiles,
  type Scratch,
  scratchCopy,
  spread,
} from '../../helpers/growth.js';

const fixtures = join(root, 'test', 'fixtures');

/** Each hand-made rollout alone (they reuse ids), the sub-agent set together, each real folder together. */
const groups = [
  ...readdirSync(join(fixtures, 'codex'))
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .map((name) => [join(fixtures, 'codex', name)]),
  [join(fixtures, 'codex', 'subagents')],
  [join(fixtures, 'real', 'codex', 'localpush-2026-02-23')],
  [join(fixtures, 'real', 'codex', 'traex-subagent')],
  [join(fixtures, 'real', 'codex-0.169.0', 'sessions')],
];

/** Rollouts whose history a sub-agent's or fork's file copies. */
const originals = [
  'rollout-2026-03-02T09-00-00-0196b000-0000-7000-8000-00000000000a.jsonl',
  'rollout-2026-12-01T19-41-33-01a23320-6ee9-7f82-8926-0c55be86fb92.jsonl',
];

const scratches: Scratch[] = [];
afterAll(() => {
  for (const scratch of scratches) scratch.remove();
});

let continuedTotal = 0;

for (const group of groups) {
  describe(relative(fixtures, group[0] as string), () => {
    const scratch = scratchCopy(group);
    scratches.push(scratch);
    const reference = fullRead(scratch.dir);

    for (const file of logFiles(scratch.dir)) {
      const name = relative(scratch.dir, file);
      // An original whose history another file copies is not grown: the copy, stored while the original was
      // shorter, keeps the history they share as it was then, even when both are read whole (the order in
      // which a copy and its original are first stored, not a case of growth; the Claude Code test skips its
      // resumed pair's original for the same reason).
      if (originals.some((original) => name.endsWith(original))) continue;
      const bytes = readFileSync(file);
      const ends = lineEnds(bytes);
      // A large file is cut at a sample of its lines; a small one at each line (at most 60 cuts).
      const cuts = spread(ends.slice(0, -1), statSync(file).size > 2e5 ? 24 : 60);

      it(`${name}: cut after each line, then grown whole, stores what a full read stores`, () => {
        for (const at of [0, ...cuts]) {
          const { dump, continued } = cutThenWhole(scratch.dir, file, at);
          continuedTotal += continued;
          expect(dump, `cut at byte ${at} of ${bytes.length}`).toEqual(reference);
        }
      });

      it(`${name}: grown line by line (and half a line at a time), ingested at each step, stores what a full read stores at every third step`, () => {
        // Every third step stops inside a line: the torn line must be left for the next ingest.
        const steps: number[] = [];
        let previous = 0;
        spread(ends, statSync(file).size > 2e5 ? 40 : 150).forEach((end, i) => {
          if (i % 3 === 2 && end - previous > 2) steps.push(previous + Math.floor((end - previous) / 2));
          steps.push(end);
          previous = end;
        });
        const { dump, continued, differ } = growThrough(scratch.dir, file, steps, { eachStep: 3 });
        continuedTotal += continued;
        expect(dump).toEqual(reference);
        expect(
          differ,
          'offsets where the grown store differs from a full read of the file as it was',
        ).toEqual([]);
      });
    }
  });
}

describe('a last line read before its newline was written', () => {
  it('is not read twice: the newline written after it belongs to it, and the next line is read on', () => {
    const scratch = scratchCopy([join(fixtures, 'codex', 'basic.jsonl')]);
    scratches.push(scratch);
    const reference = fullRead(scratch.dir);
    const [file] = logFiles(scratch.dir) as [string];
    const ends = lineEnds(readFileSync(file));
    // Stopped just before the newline of a line in the middle: that line parses whole and is taken.
    const middle = ends[Math.floor(ends.length / 2)] as number;
    const { dump, continued } = growThrough(scratch.dir, file, [
      middle - 1,
      middle + 1,
      ends.at(-1) as number,
    ]);
    expect(dump).toEqual(reference);
    expect(continued).toBe(2);
  });
});

describe('the incremental read is taken', () => {
  it('for some of the grown rollouts (not every growth falls back to a full read)', () => {
    expect(continuedTotal).toBeGreaterThan(0);
  });
});
