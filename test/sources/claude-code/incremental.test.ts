// A transcript that grew is read from where the last ingest stopped when its new lines only continue the
// conversation, and read again whole otherwise. Either way the store must be what one full read of the whole file
// makes: every Claude Code fixture, cut after each line (and inside a line, as a line still being written) and
// then grown back, is compared row for row with a fresh full read.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from '../../helpers/cli.js';
import { fullRead, growThrough, lineEnds } from '../../helpers/growth.js';
import { growthSuite } from '../../helpers/growth-suite.js';

const fixtures = join(root, 'test', 'fixtures');

/**
 * Each group is copied alone, then one of its files is grown: a transcript with its sub-agent directory, or a
 * directory of transcripts that belong together (a resumed pair, a project). The hand-made fixtures reuse session
 * ids from file to file, so each is its own group.
 */
function groupsIn(dir: string): string[][] {
  const names = readdirSync(dir).filter((name) => name !== 'schema' && !name.endsWith('.md'));
  const groups: string[][] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    if (name.endsWith('.jsonl')) {
      const own = name.replace(/\.jsonl$/, '');
      groups.push(names.includes(own) ? [path, join(dir, own)] : [path]);
    } else if (statSync(path).isDirectory() && !names.includes(`${name}.jsonl`)) groups.push([path]);
  }
  return groups;
}

const groups = [
  ...groupsIn(join(fixtures, 'claude-code')),
  ...groupsIn(join(fixtures, 'real', 'claude-code')),
  // Each 2.1.328 session with its sub-agents, alone: a check then does not read the other sessions again.
  ...groupsIn(join(fixtures, 'real', 'claude-code-2.1.328', 'projects', '-home-ada-projects-demo-app')),
];

const suite = growthSuite({
  fixtures,
  groups,
  // The original of a resumed pair is not grown: once its resumed copy is stored, the copy owns the history they
  // share as it was then (a log resumed elsewhere is not appended to any more, so this is not a case of growth;
  // it is the order in which a copy and its original are first stored).
  skip: ['resumed/44444444-4444-4444-8444-444444444444.jsonl'],
  large: 1e6,
});

describe('the incremental read is taken', () => {
  it('for some of the grown files (not every growth falls back to a full read)', () => {
    expect(suite.continued()).toBeGreaterThan(0);
  });

  it('for most growths of a Claude Code 2.1.328 session, request records included', () => {
    // Grown one line at a time, as the real binary wrote it: each model turn adds a request record (and its shape
    // and blobs) before the response. Only the first record, the compaction and lines that do not chain to the
    // conversation's last one (parallel tool results, progress) are read whole: 121 of 135 growths continue.
    const scratch = suite.scratch([join(fixtures, 'real', 'claude-code-2.1.328', 'projects')]);
    const reference = fullRead(scratch.dir);
    const file = join(
      scratch.dir,
      'projects',
      '-home-ada-projects-demo-app',
      '5a5a5a5a-0001-4000-8000-00000000000a.jsonl',
    );
    const ends = lineEnds(readFileSync(file));
    const { dump, continued } = growThrough(scratch.dir, file, ends);
    expect(dump).toEqual(reference);
    expect(reference.requests?.length).toBeGreaterThan(10);
    expect(continued).toBeGreaterThanOrEqual(Math.floor(ends.length * 0.85));
  });
});
