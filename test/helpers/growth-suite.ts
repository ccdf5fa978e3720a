// The tests every reader that continues a grown log runs on its fixtures (test/sources/*/incremental.test.ts):
// each log of each group cut after each line then grown whole, and grown line by line, must store what one full
// read of the whole group stores.

import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cutThenWhole,
  fullRead,
  growThrough,
  lineEnds,
  logFiles,
  type Scratch,
  scratchCopy,
  spread,
} from './growth.js';

export interface GrowthSuite {
  /** Folder the groups' names are given relative to. */
  fixtures: string;
  /** Paths copied together into one scratch folder, whose logs are then grown one at a time. */
  groups: string[][];
  /** Logs (paths relative to their scratch folder) that are not grown, each for the reason given beside it. */
  skip?: string[];
  /** A log larger than this many bytes is cut and grown at a sample of its lines. */
  large: number;
}

/**
 * Defines the suite's tests. `continued()` counts the ingests that continued instead of reading whole; `scratch`
 * copies paths for a test of the file's own, removed with the suite's.
 */
export function growthSuite(suite: GrowthSuite): {
  continued: () => number;
  scratch: (paths: string[]) => Scratch;
} {
  let continuedTotal = 0;
  const removals: (() => void)[] = [];
  afterAll(() => {
    for (const remove of removals) remove();
  });
  const scratch = (paths: string[]): Scratch => {
    const copy = scratchCopy(paths);
    removals.push(copy.remove);
    return copy;
  };
  for (const group of suite.groups) {
    describe(relative(suite.fixtures, group[0] as string), () => {
      const copy = scratch(group);
      const reference = fullRead(copy.dir);

      for (const file of logFiles(copy.dir)) {
        const name = relative(copy.dir, file);
        if (suite.skip?.includes(name)) continue;
        const bytes = readFileSync(file);
        const ends = lineEnds(bytes);
        const large = statSync(file).size > suite.large;
        // A large file is cut at a sample of its lines; a small one at each line (at most 60 cuts).
        const cuts = spread(ends.slice(0, -1), large ? 24 : 60);

        it(`${name}: cut after each line, then grown whole, stores what a full read stores`, () => {
          for (const at of [0, ...cuts]) {
            const { dump, continued } = cutThenWhole(copy.dir, file, at);
            continuedTotal += continued;
            expect(dump, `cut at byte ${at} of ${bytes.length}`).toEqual(reference);
          }
        });

        it(`${name}: grown line by line (and half a line at a time), ingested at each step, stores what a full read stores at every third step`, () => {
          // Every third step stops inside a line: the torn line must be left for the next ingest.
          const steps: number[] = [];
          let previous = 0;
          spread(ends, large ? 40 : 150).forEach((end, i) => {
            if (i % 3 === 2 && end - previous > 2) steps.push(previous + Math.floor((end - previous) / 2));
            steps.push(end);
            previous = end;
          });
          const { dump, continued, differ } = growThrough(copy.dir, file, steps, { eachStep: 3 });
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
  return { continued: () => continuedTotal, scratch };
}
