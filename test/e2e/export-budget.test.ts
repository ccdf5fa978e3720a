// `export --max-tokens` with the real binary on the sample sessions: every row under the budget as counted by the
// tokenizer (o200k, checked here with gpt-tokenizer itself, and a model's own tokenizer.json), the trained turn
// present and last in every trimmed model-turn row, session splits opening with a user message, the counts in
// the report equal to what was written, and bad options refused.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { run, tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let env: Record<string, string>;

const rows = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);

interface Message {
  role: string;
  content: string;
  tool_calls?: { function: { name: string; arguments: unknown } }[];
}
interface Row {
  messages?: Message[];
  prompt?: Message[];
  completion?: Message[];
  tools: unknown[];
}

interface Report {
  samples: { written: number };
  duplicates: number;
  length: {
    tokenizer: string;
    maxTokens: number | null;
    rows: { fit: number; trimmed: number; split: number; fromSplits: number; dropped: number };
    before: { max: number };
    after: { max: number };
  };
  skipped: Record<string, number>;
}

/** A tokenizer.json of GPT-2's byte-level BPE with no merges: one token per UTF-8 byte, easy to check. */
function byteTokenizer(file: string): void {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = [...bytes];
  let extra = 0;
  for (let b = 0; b < 256; b++)
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + extra++);
    }
  const vocab: Record<string, number> = {};
  bytes.forEach((byte, index) => {
    vocab[String.fromCodePoint(chars[index] as number)] = byte;
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  writeFileSync(
    file,
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: byteLevel,
      post_processor: null,
      decoder: byteLevel,
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        fuse_unk: false,
        byte_fallback: false,
        vocab,
        merges: [],
      },
    }),
  );
}

beforeAll(async () => {
  dir = tempDir('export-budget-');
  env = { XDG_DATA_HOME: join(dir.path, 'data'), XDG_CACHE_HOME: join(dir.path, 'cache') };
  expect((await run(['ingest', 'sample-sessions'], { env })).exitCode).toBe(0);
}, 60_000);
afterAll(() => dir?.remove());

const exportTo = async (name: string, args: string[]) => {
  const out = join(dir.path, name);
  const result = await run(['export', '--format', 'trl', '--out', out, '--json', ...args], { env });
  expect(result.exitCode, result.stderr).toBe(0);
  return { rows: rows(out), report: JSON.parse(result.stdout) as Report };
};

/** What a row is, in o200k tokens counted independently: its tools' JSON, each message's text and arguments. */
const rowTokens = (row: Row, count: (text: string) => number) => {
  let total = count(JSON.stringify(row.tools));
  for (const message of [...(row.messages ?? []), ...(row.prompt ?? []), ...(row.completion ?? [])]) {
    total += count(message.content ?? '');
    for (const call of message.tool_calls ?? [])
      total += count(`${call.function.name} ${JSON.stringify(call.function.arguments)}`);
  }
  return total;
};

describe('export rows', () => {
  it('open with a user message in every format, even where the recorded context opens with the model', async () => {
    for (const format of ['openai', 'trl', 'sharegpt', 'axolotl']) {
      const out = join(dir.path, `opening.${format}.jsonl`);
      const result = await run(['export', '--format', format, '--unit', 'session', '--out', out], { env });
      expect(result.exitCode, result.stderr).toBe(0);
      const written = rows(out) as unknown as Record<string, unknown>[];
      expect(written.length).toBeGreaterThan(0);
      for (const row of written) {
        const messages = (row.messages ?? row.conversations) as { role?: string; from?: string }[];
        const first = messages.find((message) => (message.role ?? message.from) !== 'system');
        expect(first?.role ?? first?.from, `${format}: ${JSON.stringify(messages).slice(0, 200)}`).toMatch(
          /^(user|human)$/,
        );
      }
    }
  }, 120_000);
});

describe('export --max-tokens', () => {
  it('trims model-turn rows oldest context first: every row fits, the trained turn kept and last', async () => {
    const full = await exportTo('full.jsonl', ['--unit', 'model-turn']);
    const budget = 5500;
    const fitted = await exportTo('fitted.jsonl', ['--unit', 'model-turn', '--max-tokens', String(budget)]);
    const { rows: counts } = fitted.report.length;
    expect(fitted.report.length).toMatchObject({ tokenizer: 'o200k_base', maxTokens: budget });
    expect(fitted.report.length.before.max).toBeGreaterThan(budget);
    expect(fitted.report.length.after.max).toBeLessThanOrEqual(budget);
    expect(counts.trimmed).toBeGreaterThan(0);
    // The counts are what was written (no row was dropped or split at this budget: rows match one to one).
    expect(counts.dropped).toBe(0);
    expect(counts.fit + counts.trimmed + counts.fromSplits - fitted.report.duplicates).toBe(
      fitted.rows.length,
    );
    expect(fitted.rows).toHaveLength(full.rows.length);
    let trimmed = 0;
    for (const [index, row] of fitted.rows.entries()) {
      const whole = full.rows[index] as Row;
      // Counted independently (the tokenizer itself, no template overhead): under the budget.
      expect(rowTokens(row, countTokens)).toBeLessThanOrEqual(budget);
      expect(row.completion).toEqual(whole.completion);
      expect(row.tools).toEqual(whole.tools);
      expect(row.prompt?.[0]?.role).toMatch(/^(system|user)$/);
      if (JSON.stringify(row.prompt) === JSON.stringify(whole.prompt)) continue;
      trimmed++;
      // What is kept is the newest context, with the cut said first.
      const opening = (row.prompt ?? []).findIndex((message) => message.role !== 'system');
      expect(row.prompt?.[opening]).toMatchObject({ role: 'user' });
      expect(row.prompt?.[opening]?.content).toMatch(
        /^\[\d+ earlier message\(s\) of this conversation were left out/,
      );
      const kept = (row.prompt ?? []).slice(opening + 1);
      expect(whole.prompt?.slice((whole.prompt?.length ?? 0) - kept.length)).toEqual(kept);
    }
    expect(trimmed).toBe(counts.trimmed);
  }, 120_000);

  it('splits session rows into rows that fit, each opening with a user message and ending with the model', async () => {
    const budget = 5500;
    const { rows: written, report } = await exportTo('sessions.jsonl', [
      '--unit',
      'session',
      '--max-tokens',
      String(budget),
    ]);
    expect(report.length.rows.split).toBeGreaterThan(0);
    expect(report.length.rows.fromSplits).toBeGreaterThan(report.length.rows.split);
    expect(report.length.rows.fit + report.length.rows.fromSplits - report.duplicates).toBe(written.length);
    for (const row of written) {
      const messages = row.messages ?? [];
      expect(messages.find((message) => message.role !== 'system')?.role).toBe('user');
      expect(messages.at(-1)?.role).toBe('assistant');
      expect(rowTokens(row, countTokens)).toBeLessThanOrEqual(budget);
    }
  }, 120_000);

  it('counts with the model’s own tokenizer.json where given', async () => {
    const folder = join(dir.path, 'bytes-model');
    mkdirSync(folder);
    byteTokenizer(join(folder, 'tokenizer.json'));
    const bytes = (text: string) => Buffer.byteLength(text);
    const plain = await exportTo('bytes-plain.jsonl', ['--unit', 'model-turn', '--tokenizer', folder]);
    expect(plain.report.length.tokenizer).toBe(join(folder, 'tokenizer.json'));
    const longest = Math.max(...plain.rows.map((row) => rowTokens(row, bytes)));
    expect(plain.report.length.after.max).toBeGreaterThanOrEqual(longest);
    const budget = Math.floor(longest * 0.95);
    const fitted = await exportTo('bytes.jsonl', [
      '--unit',
      'model-turn',
      '--tokenizer',
      folder,
      '--max-tokens',
      String(budget),
    ]);
    expect(fitted.report.length.rows.trimmed + fitted.report.length.rows.dropped).toBeGreaterThan(0);
    for (const row of fitted.rows) expect(rowTokens(row, bytes)).toBeLessThanOrEqual(budget);
  }, 120_000);

  it('says when nothing can fit, and refuses a budget or tokenizer it cannot use', async () => {
    const tiny = await exportTo('tiny.jsonl', ['--unit', 'model-turn', '--max-tokens', '1000']);
    expect(tiny.rows).toEqual([]);
    expect(Object.keys(tiny.report.skipped).join('\n')).toMatch(
      /over --max-tokens 1000: the tools and system prompt alone are \d+ tokens/,
    );
    const small = await run(['export', '--max-tokens', '100'], { env });
    expect(small.exitCode).toBe(2);
    expect(small.stderr).toContain("--max-tokens takes a whole number of at least 256, not '100'");
    const missing = await run(['export', '--tokenizer', join(dir.path, 'nope.json')], { env });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`--tokenizer ${join(dir.path, 'nope.json')}: no such file`);
    const broken = join(dir.path, 'broken.json');
    writeFileSync(broken, '{"model": ');
    const bad = await run(['export', '--tokenizer', broken], { env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(`--tokenizer ${broken}: not a tokenizer.json`);
  }, 120_000);
});

describe('trainer configs beside the export', () => {
  it('give a sequence length no row exceeds, the validation file as the eval set, and paths that resolve anywhere', async () => {
    const folder = join(dir.path, 'configs');
    mkdirSync(folder);
    const base = ['--unit', 'model-turn', '--split', '0.5', '--seed', '1', '--json'];
    const exportAs = async (format: string, extra: string[] = []) => {
      const result = await run(
        ['export', '--format', format, '--out', join(folder, `${format}.jsonl`), ...base, ...extra],
        {
          env,
          cwd: dir.path,
        },
      );
      expect(result.exitCode, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Report;
    };
    const axolotlReport = await exportAs('axolotl');
    const axolotl = parse(readFileSync(join(folder, 'axolotl.axolotl.yaml'), 'utf8')) as {
      sequence_len: number;
      datasets: { path: string }[];
      test_datasets: { path: string }[];
    };
    expect(axolotl.sequence_len).toBeGreaterThanOrEqual(axolotlReport.length.after.max);
    expect(axolotl.datasets.map((d) => d.path)).toEqual([join(folder, 'axolotl.train.jsonl')]);
    expect(axolotl.test_datasets.map((d) => d.path)).toEqual([join(folder, 'axolotl.validation.jsonl')]);
    for (const d of [...axolotl.datasets, ...axolotl.test_datasets]) expect(existsSync(d.path)).toBe(true);

    await exportAs('sharegpt', ['--max-tokens', '6000']);
    const factory = parse(readFileSync(join(folder, 'sharegpt.llamafactory.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(factory).toMatchObject({ cutoff_len: 6000, mask_history: true, dataset_dir: folder });
    const info = JSON.parse(readFileSync(join(folder, 'dataset_info.json'), 'utf8')) as Record<
      string,
      { file_name: string }
    >;
    // The names the config uses are registered, and their files are there.
    for (const name of [factory.dataset, factory.eval_dataset] as string[])
      expect(existsSync(join(folder, info[name]?.file_name ?? 'missing'))).toBe(true);

    const trlReport = await exportAs('trl');
    const trl = JSON.parse(readFileSync(join(folder, 'trl.trl.json'), 'utf8')) as {
      args: { max_length: number; completion_only_loss: boolean };
      data_files: { train: string; validation: string };
    };
    expect(trl.args.max_length).toBeGreaterThanOrEqual(trlReport.length.after.max);
    expect(trl.args.completion_only_loss).toBe(true);
    expect(Object.values(trl.data_files).every((file) => existsSync(file))).toBe(true);
  }, 120_000);
});

describe('export --system-prompt', () => {
  it('gives every row in every format the deployment’s system prompt, once and first', async () => {
    const prompt = join(dir.path, 'system.txt');
    writeFileSync(prompt, 'You are the todo-api agent. Keep answers short.\n');
    for (const format of ['openai', 'trl', 'axolotl', 'sharegpt']) {
      const out = join(dir.path, `system.${format}.jsonl`);
      const result = await run(['export', '--format', format, '--system-prompt', prompt, '--out', out], {
        env,
      });
      expect(result.exitCode, result.stderr).toBe(0);
      for (const row of rows(out) as unknown as Record<string, unknown>[]) {
        if (format === 'sharegpt') {
          expect(row.system).toBe('You are the todo-api agent. Keep answers short.');
          continue;
        }
        const messages = (row.messages ?? row.prompt) as Message[];
        expect(messages[0]).toMatchObject({
          role: 'system',
          content: 'You are the todo-api agent. Keep answers short.',
        });
        expect(messages.filter((message) => message.role === 'system')).toHaveLength(1);
      }
    }
    const missing = await run(['export', '--system-prompt', join(dir.path, 'none.txt')], { env });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`--system-prompt ${join(dir.path, 'none.txt')}: no such file`);
  }, 120_000);
});
