// Trainer configs from the data (src/export/configs.ts): parsed as the trainers parse them (YAML, JSON), their
// values checked — a sequence length no row exceeds, what is trained, the validation file as the evaluation set
// (never among the training datasets), and absolute paths that resolve from any directory.
import { isAbsolute, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ConfigFacts, sequenceLength, trainerConfigs } from '../../src/export/configs.js';

const facts = (overrides: Partial<ConfigFacts>): ConfigFacts => ({
  format: 'axolotl',
  unit: 'model-turn',
  trainOn: 'last',
  files: { train: 'out/data.train.jsonl', validation: 'out/data.validation.jsonl' },
  longest: 5000,
  tokenizer: 'o200k_base',
  ...overrides,
});

describe('sequenceLength', () => {
  it('is the budget the rows fit, else the longest row with a tenth more, in multiples of 256', () => {
    expect(sequenceLength({ longest: 5000, maxTokens: 8192 })).toBe(8192);
    expect(sequenceLength({ longest: 5000 })).toBe(5632);
    expect(sequenceLength({ longest: 10 })).toBe(256);
  });
});

describe('trainerConfigs', () => {
  it('axolotl: sequence_len ≥ the longest row, the validation file under test_datasets only, absolute paths', () => {
    const [config] = trainerConfigs(facts({}));
    expect(config?.file).toBe('out/data.axolotl.yaml');
    const yaml = parse(config?.content ?? '') as {
      sequence_len: number;
      train_on_inputs: boolean;
      datasets: { path: string; message_field_training: string; split: string }[];
      test_datasets: { path: string }[];
    };
    expect(yaml.sequence_len).toBeGreaterThanOrEqual(5000);
    expect(yaml.train_on_inputs).toBe(false);
    expect(yaml.datasets.map((d) => d.path)).toEqual([resolve('out/data.train.jsonl')]);
    expect(yaml.test_datasets.map((d) => d.path)).toEqual([resolve('out/data.validation.jsonl')]);
    expect(yaml.datasets[0]).toMatchObject({ message_field_training: 'train', split: 'train' });
    for (const d of [...yaml.datasets, ...yaml.test_datasets]) expect(isAbsolute(d.path)).toBe(true);
    // Without a split there is no test set.
    const [single] = trainerConfigs(facts({ files: { train: 'out/data.jsonl' } }));
    expect(parse(single?.content ?? '')).not.toHaveProperty('test_datasets');
  });

  it('LLaMA-Factory: cutoff_len, mask_history for model-turn rows, eval_dataset for the validation file', () => {
    const [config] = trainerConfigs(facts({ format: 'sharegpt', maxTokens: 4096 }));
    expect(parse(config?.content ?? '')).toEqual({
      stage: 'sft',
      do_train: true,
      dataset: 'data.train',
      dataset_dir: resolve('out'),
      cutoff_len: 4096,
      mask_history: true,
      eval_dataset: 'data.validation',
      eval_strategy: 'epoch',
    });
    const [sessions] = trainerConfigs(
      facts({ format: 'sharegpt', unit: 'session', trainOn: 'all-assistant' }),
    );
    expect(parse(sessions?.content ?? '')).not.toHaveProperty('mask_history');
  });

  it('TRL: SFTConfig arguments by row shape, DPOConfig for preference rows, the eval set apart', () => {
    const [prompt] = trainerConfigs(facts({ format: 'trl' }));
    expect(JSON.parse(prompt?.content ?? '')).toMatchObject({
      config: 'SFTConfig',
      args: { max_length: 5632, completion_only_loss: true, eval_strategy: 'epoch' },
      data_files: {
        train: resolve('out/data.train.jsonl'),
        validation: resolve('out/data.validation.jsonl'),
      },
    });
    const [messages] = trainerConfigs(facts({ format: 'trl', unit: 'session', trainOn: 'all-assistant' }));
    expect(JSON.parse(messages?.content ?? '').args).toEqual({
      max_length: 5632,
      assistant_only_loss: true,
      eval_strategy: 'epoch',
    });
    const [preference] = trainerConfigs(facts({ format: 'dpo', files: { train: 'prefs.jsonl' } }));
    expect(JSON.parse(preference?.content ?? '')).toMatchObject({
      config: 'DPOConfig',
      args: { max_length: 5632 },
      data_files: { train: resolve('prefs.jsonl') },
    });
    expect(trainerConfigs(facts({ format: 'openai' }))).toEqual([]);
  });
});
