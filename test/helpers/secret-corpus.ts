// The texts of the redaction corpus (test/fixtures/secrets/) as redaction reads them: each case placed as an agent
// session holds it (bench/redact/place.mjs), then its prompt, every string of its calls' arguments and their results.
import { readFileSync } from 'node:fs';
// @ts-expect-error plain .mjs module of the benchmark, no types
import { placeCorpus, strings } from '../../bench/redact/place.mjs';

export function corpusTexts(): string[] {
  const corpus = JSON.parse(
    readFileSync(new URL('../fixtures/secrets/corpus.json', import.meta.url), 'utf8'),
  );
  const out: string[] = [];
  for (const { session } of placeCorpus(corpus) as {
    session: { prompt: string; steps: { calls: { input: unknown; result: string }[] }[] };
  }[]) {
    out.push(session.prompt);
    for (const step of session.steps)
      for (const call of step.calls) out.push(...(strings(call.input) as string[]), call.result);
  }
  return out;
}
