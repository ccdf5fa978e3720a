// The trainers' rules over every fixture of real sessions (Claude Code, Codex, Gemini CLI, Qwen Code, opencode, and
// the sample sessions), through the export's own pipeline (Exporter: cleaning, redaction, the opening rule,
// rendering), for every unit and every supervised format: OpenAI's tool-aware fine-tuning checks, TRL's row shapes,
// LLaMA-Factory's alternation, axolotl's `train` fields (test/export/properties.ts) — and, for every format, a row
// opens with a user message. Each row is checked against the sample it was rendered from.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrainOn } from '../../src/export/build.js';
import { formatFor } from '../../src/export/formats/index.js';
import { Redactor } from '../../src/export/redact.js';
import { Exporter } from '../../src/export/run.js';
import type { Format, Sample, Unit } from '../../src/export/sample.js';
import { ingest } from '../../src/sources/ingest.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';
import { axolotlProblems, openaiProblems, sharegptProblems, trlProblems } from './properties.js';

const fixtures = [
  'sample-sessions',
  'test/fixtures/real/claude-code',
  'test/fixtures/real/claude-code-2.1.328/projects',
  'test/fixtures/real/codex',
  'test/fixtures/real/codex-0.169.0',
  'test/fixtures/real/gemini',
  'test/fixtures/real/gemini-cli-0.61.0/home/.gemini/tmp',
  'test/fixtures/real/qwen-code-0.24.4/home/.qwen/projects',
  'test/fixtures/real/opencode',
];

let store: ReturnType<typeof tempStore>;
beforeAll(() => {
  store = tempStore();
  ingest(
    store.db,
    fixtures.map((path) => join(root, path)),
  );
});
afterAll(() => store.close());

const units: Unit[] = ['session', 'user-turn', 'model-turn'];
const trainOnFor = (unit: Unit): TrainOn => (unit === 'model-turn' ? 'last' : 'all-assistant');

/** Every row the export writes, with the sample it was rendered from. */
async function exported(name: string, unit: Unit): Promise<{ sample: Sample; row: unknown }[]> {
  const inner = formatFor(name, { trainOn: trainOnFor(unit), unit });
  const out: { sample: Sample; row: unknown }[] = [];
  const format: Format = {
    ...inner,
    render(sample) {
      const rendered = inner.render(sample);
      if ('row' in rendered) out.push({ sample, row: rendered.row });
      return rendered;
    },
  };
  const exporter = new Exporter(
    {
      format,
      unit,
      trainOn: trainOnFor(unit),
      includeInjected: false,
      minTurns: 0,
      seed: 0,
      redactor: new Redactor(),
    },
    'original',
    async () => {},
  );
  await exporter.fromStore(new SessionStore(store.db));
  return out;
}

/** The first message of a row that is not its system prompt, in the row's own words. */
function openingRole(row: Record<string, unknown>): string | undefined {
  const messages = (row.messages ?? row.prompt ?? row.conversations) as { role?: string; from?: string }[];
  return messages.map((message) => message.role ?? message.from).find((role) => role !== 'system');
}

describe('every fixture, every unit, every format, by its trainer’s rules', () => {
  it('reads the fixtures: sessions of every agent', () => {
    const agents = new Set(
      new SessionStore(store.db).allIds().map((id) => new SessionStore(store.db).row(id)?.agent),
    );
    expect([...agents].sort()).toEqual(['claude-code', 'codex', 'gemini', 'opencode', 'qwen']);
  });

  it.each(units)('openai, per %s: the tool-aware fine-tuning checks', async (unit) => {
    const rows = await exported('openai', unit);
    expect(rows.length).toBeGreaterThan(10);
    for (const { sample, row } of rows) {
      expect(openaiProblems(row, sample), sample.id).toEqual([]);
      expect(openingRole(row as Record<string, unknown>), sample.id).toBe('user');
    }
  });

  it.each(units)('sharegpt, per %s: LLaMA-Factory’s alternation', async (unit) => {
    for (const { sample, row } of await exported('sharegpt', unit)) {
      expect(sharegptProblems(row), sample.id).toEqual([]);
      expect(openingRole(row as Record<string, unknown>), sample.id).toBe('human');
    }
  });

  it.each(units)('trl and axolotl, per %s: their row shapes and train flags', async (unit) => {
    for (const { sample, row } of await exported('trl', unit)) {
      expect(trlProblems(row), sample.id).toEqual([]);
      expect(openingRole(row as Record<string, unknown>), sample.id).toBe('user');
    }
    for (const { sample, row } of await exported('axolotl', unit)) {
      expect(axolotlProblems(row, sample), sample.id).toEqual([]);
      expect(openingRole(row as Record<string, unknown>), sample.id).toBe('user');
    }
  });
});
