// Trainer configs written beside an export, from the data: the sequence length every row fits in, what is
// trained, and the dataset files by absolute path (so the config works from any directory), the validation file
// as the trainer's evaluation set — never among the training data. Pure: the caller writes the files.
import { basename, dirname, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { FormatName } from './formats/index.js';
import type { Unit } from './sample.js';

export interface ConfigFacts {
  format: FormatName;
  unit: Unit;
  trainOn: string;
  /** The files written: the training file and, with --split, the validation file. */
  files: { train: string; validation?: string };
  /** The longest row written, in tokens (tools and template estimate included). */
  longest: number;
  /** --max-tokens, when given: every row fits it. */
  maxTokens?: number;
  tokenizer: string;
}

export interface ConfigFile {
  file: string;
  content: string;
  /** What it is for, said after the export. */
  what: string;
}

/**
 * The sequence length to train with: the budget the rows were made to fit, else the longest row with a tenth
 * more for the chat template's own tokens (our count is an estimate of it), rounded up to a multiple of 256.
 */
export function sequenceLength(facts: Pick<ConfigFacts, 'longest' | 'maxTokens'>): number {
  if (facts.maxTokens !== undefined) return facts.maxTokens;
  return Math.max(256, Math.ceil((facts.longest * 1.1) / 256) * 256);
}

/** `out.jsonl` → `out`, `out.train.jsonl` → `out` (the split's two files share one config). */
function stem(file: string): string {
  return file.replace(/\.(train|validation)(?=\.[^.]+$)/, '').replace(/\.jsonl?$/, '');
}

const header = (what: string, facts: ConfigFacts) =>
  `# ${what}, written by replay-history export from the rows beside it.\n` +
  `# Rows: per ${facts.unit}, training on ${facts.trainOn}; the longest is ${facts.longest} tokens (${facts.tokenizer}).\n`;

function trl(facts: ConfigFacts): ConfigFile {
  const preference = facts.format === 'dpo';
  const length = sequenceLength(facts);
  // TRL's row shape decides what the loss covers: prompt–completion rows train the completion only; `messages`
  // rows carry no per-message mask, so assistant_only_loss trains every assistant turn (the template must mark
  // them with {% generation %}, as TRL requires).
  const promptCompletion =
    facts.trainOn === 'last' || (facts.trainOn === 'replayed' && facts.unit === 'model-turn');
  const args: Record<string, unknown> = preference
    ? { max_length: length }
    : promptCompletion
      ? { max_length: length, completion_only_loss: true }
      : { max_length: length, assistant_only_loss: true };
  const dataFiles: Record<string, string> = { train: resolve(facts.files.train) };
  if (facts.files.validation) dataFiles.validation = resolve(facts.files.validation);
  const config = {
    trainer: preference ? 'DPOTrainer' : 'SFTTrainer',
    config: preference ? 'DPOConfig' : 'SFTConfig',
    args: facts.files.validation ? { ...args, eval_strategy: 'epoch' } : args,
    data_files: dataFiles,
    usage: [
      'from datasets import load_dataset',
      `from trl import ${preference ? 'DPOConfig, DPOTrainer' : 'SFTConfig, SFTTrainer'}`,
      'import json; c = json.load(open(CONFIG))',
      'data = load_dataset("json", data_files=c["data_files"])',
      `${preference ? 'DPOTrainer' : 'SFTTrainer'}(model=MODEL, args=${preference ? 'DPOConfig' : 'SFTConfig'}(output_dir=OUT, **c["args"]), train_dataset=data["train"]${facts.files.validation ? ', eval_dataset=data["validation"]' : ''})`,
    ],
  };
  return {
    file: `${stem(facts.files.train)}.trl.json`,
    content: `${JSON.stringify(config, null, 2)}\n`,
    what: `TRL ${config.config} and the data files`,
  };
}

function axolotl(facts: ConfigFacts): ConfigFile {
  const dataset = (file: string) => ({
    path: resolve(file),
    ds_type: 'json',
    // A JSON file loaded by `datasets` is one split named train, whichever side of our split it holds.
    split: 'train',
    type: 'chat_template',
    field_messages: 'messages',
    field_tools: 'tools',
    message_field_training: 'train',
    roles_to_train: [],
    train_on_eos: 'turn',
  });
  const config: Record<string, unknown> = {
    sequence_len: sequenceLength(facts),
    // The per-message `train` flags decide what is learned; nothing else is.
    train_on_inputs: false,
    datasets: [dataset(facts.files.train)],
  };
  if (facts.files.validation) config.test_datasets = [dataset(facts.files.validation)];
  return {
    file: `${stem(facts.files.train)}.axolotl.yaml`,
    content: `${header('axolotl config entries (merge into your config: base_model, adapter, …)', facts)}${stringify(config)}`,
    what: 'axolotl datasets, test_datasets and sequence_len',
  };
}

function llamaFactory(facts: ConfigFacts): ConfigFile {
  // dataset_info.json (beside the rows) names each file by its name without the extension.
  const name = (file: string) => basename(file).replace(/\.[^.]*$/, '');
  const config: Record<string, unknown> = {
    stage: 'sft',
    do_train: true,
    dataset: name(facts.files.train),
    dataset_dir: resolve(dirname(facts.files.train)),
    cutoff_len: sequenceLength(facts),
    // A model-turn row trains its last turn only; without this LLaMA-Factory trains every assistant turn.
    ...(facts.unit === 'model-turn' || facts.trainOn === 'last' ? { mask_history: true } : {}),
  };
  if (facts.files.validation) {
    config.eval_dataset = name(facts.files.validation);
    config.eval_strategy = 'epoch';
  }
  return {
    file: `${stem(facts.files.train)}.llamafactory.yaml`,
    content: `${header('LLaMA-Factory training arguments (add model_name_or_path, template, finetuning_type, output_dir)', facts)}${stringify(config)}`,
    what: 'LLaMA-Factory dataset, cutoff_len and mask_history',
  };
}

/** The configs for a format (OpenAI's fine-tuning takes the file itself: none). */
export function trainerConfigs(facts: ConfigFacts): ConfigFile[] {
  switch (facts.format) {
    case 'trl':
    case 'dpo':
      return [trl(facts)];
    case 'axolotl':
      return [axolotl(facts)];
    case 'sharegpt':
      return [llamaFactory(facts)];
    default:
      return [];
  }
}
