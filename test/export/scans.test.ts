import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sampleTexts } from '../../src/export/clean.js';
import type { Finding } from '../../src/export/redact/finding.js';
import { Scanner } from '../../src/export/redact/scanner.js';
import { Redactor, type Scans } from '../../src/export/redact.js';
import type { Sample } from '../../src/export/sample.js';
import { corpusTexts } from '../helpers/secret-corpus.js';

// The rules' scan of redaction can be done on other threads (src/export/scan-thread.ts): the Redactor takes the
// findings of a text from them instead of scanning it, and what it scans itself it hands back for later samples.
// Here: the Redactor really uses what it is given and gives back what it made; the threads (the built worker, as
// export runs it) find exactly what the main thread's Scanner finds, in the same order, on the whole secret corpus;
// and sampleTexts lists every text redactSample redacts.

/** A Scans over a map, noting what the Redactor asks and puts. */
function mapScans(known: Map<string, readonly Finding[]>) {
  const asked: string[] = [];
  const put = new Map<string, readonly Finding[]>();
  const scans: Scans = {
    get: (text) => {
      asked.push(text);
      return known.get(text);
    },
    put: (text, found) => put.set(text, found),
  };
  return { scans, asked, put };
}

describe('the Redactor with findings scanned elsewhere', () => {
  it('applies the findings it is given instead of scanning', () => {
    // a finding no rule would make: only the given list can have put it there
    const text = 'nothing secret in here at all';
    const { scans } = mapScans(new Map([[text, [{ start: 8, end: 14, kind: 'api_key', priority: 1 }]]]));
    const redactor = new Redactor();
    redactor.useScans(scans);
    expect(redactor.redactText(text)).toBe('nothing [REDACTED_API_KEY_1] in here at all');
    redactor.useScans(undefined);
    expect(new Redactor().redactText(text)).toBe(text);
  });

  it('scans a text it is given nothing for, and hands its findings back', () => {
    const secret = `ghp_${'aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4'}`;
    const text = `export GITHUB_TOKEN=${secret}`;
    const { scans, put } = mapScans(new Map());
    const redactor = new Redactor();
    redactor.useScans(scans);
    const out = redactor.redactText(text);
    expect(out).not.toContain(secret);
    expect(put.get(text)).toEqual(new Scanner().find(text));
    // and the same text with those findings given gives the same output
    const again = new Redactor();
    again.useScans(mapScans(new Map(put)).scans);
    expect(again.redactText(text)).toBe(out);
  });

  it('leaves the given findings as they were (the overlap resolution sorts its own copy)', () => {
    const text = 'a ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4 b user@example.com';
    const found = new Scanner().find(text);
    const frozen = Object.freeze(found.map((f) => Object.freeze({ ...f })));
    const redactor = new Redactor();
    redactor.useScans(mapScans(new Map([[text, frozen]])).scans);
    expect(redactor.redactText(text)).toBe(new Redactor().redactText(text));
    expect(frozen).toEqual(found);
  });
});

describe('sampleTexts', () => {
  it('lists every text redactSample redacts, in its order', async () => {
    const { redactSample } = await import('../../src/export/clean.js');
    const sample: Sample = {
      session: 's',
      agent: 'claude-code',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hello' },
        {
          role: 'assistant',
          content: 'let me look',
          reasoning: 'thinking',
          train: true,
          calls: [
            { id: 'c1', name: 'Bash', arguments: { command: 'ls', env: { A: ['x', { B: 'y' }] } } },
            { id: 'c2', name: 'Raw', arguments: {}, raw: 'raw text' },
          ],
        },
        { role: 'tool', content: 'result', toolCallId: 'c1' },
      ],
      preference: {
        chosen: { role: 'assistant', content: 'chosen', train: true, calls: [] },
        rejected: { role: 'assistant', content: 'rejected', train: true, calls: [] },
      },
    } as unknown as Sample;
    const seen: string[] = [];
    redactSample(
      {
        redactText: (text) => {
          seen.push(text);
          return text;
        },
        redactValue: (value) => {
          const walk = (v: unknown): unknown => {
            if (typeof v === 'string') seen.push(v);
            else if (Array.isArray(v)) v.forEach(walk);
            else if (v && typeof v === 'object')
              for (const [k, item] of Object.entries(v)) {
                seen.push(k);
                walk(item);
              }
            return v;
          };
          return walk(value);
        },
        counts: () => ({}),
      },
      sample,
    );
    expect(sampleTexts(sample)).toEqual(seen);
  });
});

const built = new URL('../../dist/export/scan-thread.js', import.meta.url);

describe.runIf(existsSync(built))('the scanning threads (dist/)', () => {
  it('find what the Scanner finds here, text for text, on the secret corpus', async () => {
    const { ScanThreads } = (await import(built.href)) as typeof import('../../src/export/scan-thread.js');
    const texts = corpusTexts();
    const threads = ScanThreads.open(2);
    expect(threads).toBeDefined();
    if (!threads) return;
    try {
      // one "sample" per 50 texts, as the export sends them
      const seqs: number[] = [];
      for (let i = 0; i < texts.length; i += 50) seqs.push(threads.ahead(texts.slice(i, i + 50)));
      const deadline = Date.now() + 60_000;
      const pending = () => texts.filter((text) => text !== '' && threads.get(text) === undefined);
      while (pending().length > 0 && Date.now() < deadline) {
        threads.taking(0); // collects the answers in, skips nothing
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(pending()).toEqual([]);
      const scanner = new Scanner();
      let withFindings = 0;
      for (const text of texts) {
        if (text === '') continue;
        const here = scanner.find(text);
        if (here.length > 0) withFindings++;
        expect(threads.get(text)).toEqual(here);
      }
      // the corpus is mostly secrets: a thread answering "nothing" everywhere would fail above
      expect(withFindings).toBeGreaterThan(500);
      // each sample taken lets its texts go
      for (const seq of seqs) {
        threads.taking(seq);
        threads.release(seq);
      }
      expect(threads.get(texts.find((text) => text !== '') as string)).toBeUndefined();
      expect(threads.failure).toBeUndefined();
    } finally {
      await threads.end();
    }
  }, 120_000);

  it('go on without a thread that stopped, and say that it did', async () => {
    const { ScanThreads } = (await import(built.href)) as typeof import('../../src/export/scan-thread.js');
    const threads = ScanThreads.open(2);
    if (!threads) throw new Error('no threads');
    try {
      const first = (threads as unknown as { threads: { worker: import('node:worker_threads').Worker }[] })
        .threads[0];
      await first?.worker.terminate();
      const deadline = Date.now() + 30_000;
      while (threads.failure === undefined && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(threads.failure?.message).toMatch(/exit code/);
      // every sample now goes to the thread left
      const texts = ['token ghp_aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4', 'plain words', 'more plain words'];
      for (const text of texts) threads.ahead([text]);
      while (texts.some((text) => threads.get(text) === undefined) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        threads.taking(0);
      }
      for (const text of texts) expect(threads.get(text)).toEqual(new Scanner().find(text));
    } finally {
      await threads.end();
    }
  }, 60_000);

  it('skip the samples the main thread has begun to take', async () => {
    const { ScanThreads } = (await import(built.href)) as typeof import('../../src/export/scan-thread.js');
    const threads = ScanThreads.open(1);
    if (!threads) throw new Error('no threads');
    try {
      // taken before the thread can have started: its texts are never answered
      const skipped = threads.ahead(['AKIAIOSFODNN7EXAMPL1 skipped']);
      threads.taking(skipped);
      const later = threads.ahead(['AKIAIOSFODNN7EXAMPL2 answered']);
      const deadline = Date.now() + 30_000;
      while (threads.get('AKIAIOSFODNN7EXAMPL2 answered') === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        threads.taking(skipped);
      }
      expect(threads.get('AKIAIOSFODNN7EXAMPL2 answered')).toBeDefined();
      expect(threads.get('AKIAIOSFODNN7EXAMPL1 skipped')).toBeUndefined();
      threads.release(skipped);
      threads.release(later);
    } finally {
      await threads.end();
    }
  }, 60_000);
});
