import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Built, fromSession, type TrainOn } from '../../src/export/build.js';
import { formatFor } from '../../src/export/formats/index.js';
import type { Format, Sample, Unit } from '../../src/export/sample.js';
import { sideOf } from '../../src/export/split.js';
import { ingest } from '../../src/sources/ingest.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';
import { axolotlProblems, openaiProblems, sharegptProblems, trlProblems } from './properties.js';

// Samples built from the repository's sample sessions (Claude Code with a sub-agent, opencode) for every unit,
// rendered in every format: the property checks hold on each row, and each format's output is pinned by a golden
// file (regenerate with UPDATE_GOLDEN=1 after a deliberate change, and read the diff).
let store: ReturnType<typeof tempStore>;
let samples: Map<Unit, Sample[]>;
let skips: Map<Unit, string[]>;

const units: Unit[] = ['session', 'user-turn', 'model-turn'];
const trainOnFor = (unit: Unit): TrainOn => (unit === 'model-turn' ? 'last' : 'all-assistant');

beforeAll(() => {
  store = tempStore();
  ingest(store.db, [join(root, 'sample-sessions')]);
  const sessions = new SessionStore(store.db);
  samples = new Map();
  skips = new Map();
  for (const unit of units) {
    const built: Built[] = [];
    for (const id of sessions.allIds()) {
      const loaded = sessions.load(id);
      if (!loaded) continue;
      built.push(
        ...fromSession(loaded.session, loaded.own, {
          unit,
          trainOn: trainOnFor(unit),
          includeInjected: false,
        }),
      );
    }
    samples.set(
      unit,
      built.flatMap((b) => ('sample' in b ? [b.sample] : [])),
    );
    skips.set(
      unit,
      built.flatMap((b) => ('skip' in b ? [b.skip] : [])),
    );
  }
});
afterAll(() => store.close());

const rows = (format: Format, unit: Unit) =>
  (samples.get(unit) ?? []).flatMap((sample) => {
    const rendered = format.render(sample);
    return 'row' in rendered ? [{ sample, row: rendered.row }] : [];
  });

describe('samples from the sample sessions', () => {
  it('one per model turn (30), per real user turn, per session segment; the empty session is skipped', () => {
    expect(samples.get('model-turn')).toHaveLength(30);
    // 6 sessions, one of them with no assistant turn; two were compacted, so they give one sample per segment
    // (the model never saw the whole of them at once): 3 × 1 + 2 × 2.
    expect(skips.get('session')).toEqual(['no assistant turns']);
    expect(samples.get('session')).toHaveLength(7);
    // Each segment's sample ends at its last turn: two sessions have two such ends.
    const ends = new Map<string, number>();
    for (const sample of samples.get('session') ?? [])
      ends.set(sample.session, (ends.get(sample.session) ?? 0) + 1);
    expect([...ends.values()].sort()).toEqual([1, 1, 1, 2, 2]);
    const perUser = samples.get('user-turn') ?? [];
    expect(perUser.length).toBeGreaterThanOrEqual(5);
    expect(perUser.length).toBeLessThan(30);
  });

  it('keeps the invariants: a system message only first, every call before the end answered, an assistant last', () => {
    for (const unit of units) {
      for (const sample of samples.get(unit) ?? []) {
        const { messages } = sample;
        expect(messages.at(-1)?.role, sample.id).toBe('assistant');
        expect(
          messages.slice(1).some((m) => m.role === 'system'),
          sample.id,
        ).toBe(false);
        const answered = new Set(messages.flatMap((m) => (m.role === 'tool' ? [m.callId] : [])));
        const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
        messages.forEach((m, i) => {
          if (m.role === 'assistant' && i < lastAssistant)
            for (const call of m.calls) expect(answered.has(call.id), `${sample.id} ${call.id}`).toBe(true);
        });
      }
    }
  });

  it('trains the answer of a model turn only, and a user turn from its user message on', () => {
    for (const sample of samples.get('model-turn') ?? []) {
      const trained = sample.messages.filter((m) => m.role === 'assistant' && m.train);
      expect(trained).toEqual([sample.messages.at(-1)]);
    }
    for (const sample of samples.get('user-turn') ?? []) {
      const lastUser = sample.messages.map((m) => m.role).lastIndexOf('user');
      sample.messages.forEach((m, i) => {
        if (m.role === 'assistant') expect(m.train, `${sample.id} message ${i}`).toBe(i > lastUser);
      });
    }
  });
});

describe('every format over the sample sessions', () => {
  it('openai: the fine-tuning schema on every line', () => {
    for (const unit of units) {
      const written = rows(formatFor('openai'), unit);
      expect(written.length).toBeGreaterThan(0);
      for (const { sample, row } of written) expect(openaiProblems(row, sample), sample.id).toEqual([]);
    }
  });

  it('sharegpt: strict alternation on every row LLaMA-Factory would read', () => {
    for (const unit of units) {
      const written = rows(formatFor('sharegpt'), unit);
      expect(written.length).toBeGreaterThan(0);
      for (const { sample, row } of written) expect(sharegptProblems(row), sample.id).toEqual([]);
    }
  });

  it('trl and axolotl: objects and train flags as their trainers read them', () => {
    for (const unit of units) {
      for (const { sample, row } of rows(formatFor('trl', { trainOn: trainOnFor(unit), unit }), unit))
        expect(trlProblems(row), sample.id).toEqual([]);
      for (const { sample, row } of rows(formatFor('axolotl'), unit))
        expect(axolotlProblems(row, sample), sample.id).toEqual([]);
    }
  });

  it.each(['openai', 'trl', 'sharegpt', 'axolotl'])('%s golden file (per user turn)', (name) => {
    const format = formatFor(name, { trainOn: 'all-assistant', unit: 'user-turn' });
    const text = rows(format, 'user-turn')
      .map(({ row }) => JSON.stringify(row))
      .join('\n');
    const file = join(root, 'test', 'export', 'golden', 'sessions', `${name}.jsonl`);
    if (process.env.UPDATE_GOLDEN) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${text}\n`);
    }
    expect(`${text}\n`).toBe(readFileSync(file, 'utf8'));
  });
});

describe('the split', () => {
  it('puts every session on one side, the same for the same seed, and near the asked share over many', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `session-${i}`);
    const first = ids.map((id) => sideOf(id, 7, 0.9));
    expect(ids.map((id) => sideOf(id, 7, 0.9))).toEqual(first);
    const train = first.filter((side) => side === 'train').length / ids.length;
    expect(train).toBeGreaterThan(0.87);
    expect(train).toBeLessThan(0.93);
    // Another seed moves sessions; a larger share only moves sessions from validation to train.
    expect(ids.map((id) => sideOf(id, 8, 0.9))).not.toEqual(first);
    ids.forEach((id, i) => {
      if (first[i] === 'train') expect(sideOf(id, 7, 0.95)).toBe('train');
    });
  });
});
