import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain .mjs module of the benchmark, no types
import { placeCorpus, transcript } from '../../bench/redact/place.mjs';
import { scanThreadCount } from '../../src/export/scan-thread.js';
import { root, run } from '../helpers/cli.js';

// Export with redaction scans texts on other threads ahead of the main thread (src/export/scan-thread.ts). Whether
// they scan, how many, and whether the main thread ends up scanning some texts itself must not change a byte of
// the output: a third of the secret corpus (test/fixtures/secrets/: 900-odd sessions of secrets and look-alikes placed
// as agent logs hold them) and the sample sessions, exported by the built CLI with no thread, one and three per
// session, and per model turn (where consecutive samples repeat the conversation, so a text is sent once and
// shared by the samples that hold it).

let work: string;
let db: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'rh-threads-'));
  const projects = join(work, 'projects', '-work-app');
  mkdirSync(projects, { recursive: true });
  const corpus = JSON.parse(
    readFileSync(new URL('../fixtures/secrets/corpus.json', import.meta.url), 'utf8'),
  );
  (placeCorpus(corpus) as { id: string }[]).forEach((c, i) => {
    if (i % 3 === 0) writeFileSync(join(projects, `case-${c.id}.jsonl`), transcript(c));
  });
  db = join(work, 'store.db');
  const ingested = await run(['ingest', join(work, 'projects'), join(root, 'sample-sessions'), '--db', db]);
  expect(ingested.exitCode, ingested.stderr).toBe(0);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

async function exported(threads: number, args: string[]): Promise<{ rows: string; report: unknown }> {
  const out = join(work, `out-${threads}-${args.join('')}.jsonl`);
  const ran = await run(['export', '--db', db, '--out', out, '--json', ...args], {
    env: { REPLAY_HISTORY_SCAN_THREADS: String(threads) },
  });
  expect(ran.exitCode, ran.stderr).toBe(0);
  const report = JSON.parse(ran.stdout.replaceAll(out, 'OUT')) as { warnings: Record<string, number> };
  return { rows: readFileSync(out, 'utf8'), report };
}

describe('export with scanning threads', () => {
  for (const [args, counts] of [
    [
      ['--unit', 'session'],
      [1, 3],
    ],
    [['--unit', 'model-turn'], [2]],
  ] as const)
    it(`writes the same rows and report with 0 and ${counts.join(', ')} threads (${args.join(' ')})`, async () => {
      const none = await exported(0, [...args]);
      expect(none.rows).toContain('[REDACTED_');
      for (const threads of counts) {
        const got = await exported(threads, [...args]);
        expect(got.rows === none.rows, `rows with ${threads} threads differ`).toBe(true);
        expect(got.report).toEqual(none.report);
      }
    }, 180_000);
});

describe('scanThreadCount', () => {
  it('takes REPLAY_HISTORY_SCAN_THREADS, else one per core beyond the first, 1 to 4', () => {
    expect(scanThreadCount({ REPLAY_HISTORY_SCAN_THREADS: '0' })).toBe(0);
    expect(scanThreadCount({ REPLAY_HISTORY_SCAN_THREADS: ' 3 ' })).toBe(3);
    expect(scanThreadCount({ REPLAY_HISTORY_SCAN_THREADS: '99' })).toBe(16);
    const machine = scanThreadCount({});
    expect(scanThreadCount({ REPLAY_HISTORY_SCAN_THREADS: 'many' })).toBe(machine);
    expect(machine).toBeGreaterThanOrEqual(1);
    expect(machine).toBeLessThanOrEqual(4);
  });
});
