// A Gemini CLI log that grew is read from where the last ingest stopped when its new records only continue it,
// and read again whole otherwise. Either way the store (and the state kept to continue) must be what one full
// read of the whole file makes: the real 0.61 logs, cut after each line (and inside a line, as a line still
// being written) and then grown back, are compared row for row with a fresh full read.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../../helpers/cli.js';
import { growthSuite } from '../../helpers/growth-suite.js';

const fixtures = join(root, 'test', 'fixtures');

const suite = growthSuite({
  fixtures,
  groups: [[join(fixtures, 'real', 'gemini-cli-0.61.0', 'home', '.gemini')]],
  large: 1e6,
});

describe('the incremental read is taken', () => {
  it('for some growths of the real logs (not every growth falls back to a full read)', () => {
    expect(suite.continued()).toBeGreaterThan(0);
  });
});
