import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain .mjs module of the benchmark, no types
import { score } from '../../bench/redact/measure.mjs';
// @ts-expect-error plain .mjs module of the benchmark, no types
import { altered, leaks, placeCorpus, redactCase } from '../../bench/redact/place.mjs';
import { Redactor } from '../../src/export/redact.js';

// The redaction corpus (test/fixtures/secrets/, built by bench/redact/build-corpus.mjs from gitleaks', trufflehog's
// and detect-secrets' public test data plus generated keys and credentials) placed as agent sessions hold it, and
// redacted in process as export does. Fails if recall drops or look-alikes start being altered: the floors are
// the figures measured when the corpus was made (94.9 %, 0 of 307), raised with the rules since (96.8 %, 0 of
// 307; error-log lines 92.3 %, bare tokens 92.1 %), less a small margin.
const corpus = JSON.parse(readFileSync(new URL('../fixtures/secrets/corpus.json', import.meta.url), 'utf8'));

describe('the redaction corpus', () => {
  const redactor = new Redactor();
  const cases = placeCorpus(corpus);
  const result = score(cases, (c: { type: string; forms: string[] }) => {
    const { original, redacted } = redactCase(redactor, c);
    return c.type === 'secret'
      ? !leaks(c.forms, original, redacted)
      : altered(c.forms[0], original, redacted);
  });

  it('keeps recall at 96 % or more', () => {
    expect(result.caught / result.secrets).toBeGreaterThanOrEqual(0.96);
  });

  it('alters at most 1 % of the look-alikes', () => {
    expect(result.altered / result.lookalikes).toBeLessThanOrEqual(0.01);
  });

  it('catches 90 % or more in error-log lines and of bare tokens (issue 20)', () => {
    for (const context of ['error-log', 'bare']) {
      const row = (result.by.context as Map<string, { n: number; hit: number }>).get(context);
      expect({ context, recall: row !== undefined && row.hit / row.n >= 0.9 }).toEqual({
        context,
        recall: true,
      });
    }
  });

  it('catches 90 % or more in every placement', () => {
    for (const [placement, row] of result.by.placement as Map<string, { n: number; hit: number }>)
      expect({ placement, recall: row.hit / row.n >= 0.9 }).toEqual({ placement, recall: true });
  });
});
