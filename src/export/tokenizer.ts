// The tokenizer rows are measured with: OpenAI's o200k_base by default (gpt-tokenizer), or the tokenizer of the
// model being trained, from its own `tokenizer.json` (Hugging Face's format, read by @huggingface/tokenizers, a
// pure-JS implementation of it), with its `tokenizer_config.json` where one is beside it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { Count } from './budget.js';

export interface Measure {
  /** What the counts are in: `o200k_base`, or the tokenizer file. */
  name: string;
  count: Count;
}

export const o200k: Measure = { name: 'o200k_base', count: (text) => countTokens(text) };

export class TokenizerError extends Error {}

/** `o200k` (or `o200k_base`), else a path to a tokenizer.json (or the folder holding one). */
export function measureFor(choice: string | undefined): Measure {
  if (choice === undefined || choice === 'o200k' || choice === 'o200k_base') return o200k;
  const file = existsSync(join(choice, 'tokenizer.json')) ? join(choice, 'tokenizer.json') : choice;
  if (!existsSync(file))
    throw new TokenizerError(`--tokenizer ${choice}: no such file (a tokenizer.json, or o200k)`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TokenizerError(`--tokenizer ${file}: not a tokenizer.json (${(error as Error).message})`);
  }
  const configFile = join(dirname(file), 'tokenizer_config.json');
  let config: object = {};
  if (existsSync(configFile)) {
    try {
      config = JSON.parse(readFileSync(configFile, 'utf8')) as object;
    } catch {
      // A config that cannot be read changes no count of ours: the vocabulary and merges are in tokenizer.json.
    }
  }
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json as object, config);
    tokenizer.encode('replay-history');
  } catch (error) {
    throw new TokenizerError(`--tokenizer ${file}: cannot be used (${(error as Error).message})`);
  }
  return {
    name: file,
    // Special tokens are the template's, counted per message (budget.ts perMessage), not per text.
    count: (text) => (text === '' ? 0 : tokenizer.encode(text, { add_special_tokens: false }).ids.length),
  };
}
