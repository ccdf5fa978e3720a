// The tokenizer rows are measured with: OpenAI's o200k_base by default (gpt-tokenizer), or the tokenizer of the
// model being trained, from its own `tokenizer.json` (Hugging Face's format, read by @huggingface/tokenizers, a
// pure-JS implementation of it), with its `tokenizer_config.json` where one is beside it.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { Count } from './budget.js';
import { scanner } from './o200k.js';

export interface Measure {
  /** What the counts are in: `o200k_base`, or the tokenizer file. */
  name: string;
  count: Count;
}

// Loaded on the first count (its ranks are ~70 MB of heap): an export whose counts are made on the counting
// thread (count-thread.ts) never loads it on the main thread.
const require = createRequire(import.meta.url);
type CountWith = (text: string, options: { disallowedSpecial: Set<string> }) => number;
let countTokens: CountWith | undefined;
/**
 * A special token's text (`<|endoftext|>`, `<|im_start|>`, …) in a session is text like any other: a log of work
 * on a tokenizer or a chat template holds them. gpt-tokenizer refuses them by default (it throws, which ended the
 * whole export); counted as ordinary text, as the trainer's text is.
 */
const ORDINARY = { disallowedSpecial: new Set<string>() };

interface Core {
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): number[];
}

/** gpt-tokenizer's count, through the scanner of o200k.ts over its own encoder where that is there. */
function load(): Count {
  const module = require('gpt-tokenizer/encoding/o200k_base') as {
    default?: { bytePairEncodingCoreProcessor?: Core };
  };
  const core = module.default?.bytePairEncodingCoreProcessor;
  // the encoder is gpt-tokenizer's own (not its API): a version without it is counted through its API
  if (typeof core?.getBpeRankFromString !== 'function' || typeof core.bytePairEncode !== 'function')
    return o200kByLibrary;
  return scanner({
    rank: (piece) => core.getBpeRankFromString(piece),
    merge: (piece) => core.bytePairEncode(piece).length,
  });
}

let counter: Count | undefined;

export const o200k: Measure = {
  name: 'o200k_base',
  count: (text) => {
    counter ??= load();
    return counter(text);
  },
};

/** gpt-tokenizer's own count (its API, its regex): what o200k.count must equal. */
export function o200kByLibrary(text: string): number {
  countTokens ??= (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountWith }).countTokens;
  return countTokens(text, ORDINARY);
}

/** Loads o200k's ranks now (about 0.3 s) rather than on the first count: the counting thread does it at its start. */
export function loadO200k(): void {
  o200k.count('');
}

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

/** Texts kept with their counts, in UTF-16 code units (oldest forgotten first): at most 8 MB of strings. */
const COUNTED_MAX_CHARS = 4_000_000;

/**
 * A counter that remembers what it counted: each row's messages are counted once for its length and again for
 * the report (mostly the same texts), every model-turn or user-turn row repeats the conversation before it, and
 * a session's tool list is the same in each of its rows. Bounded, so memory does not grow with the store.
 */
export function remembering(count: Count): Count {
  const known = new Map<string, number>();
  let chars = 0;
  return (text) => {
    const seen = known.get(text);
    if (seen !== undefined) return seen;
    const n = count(text);
    known.set(text, n);
    chars += text.length;
    if (chars > COUNTED_MAX_CHARS)
      for (const old of known.keys()) {
        known.delete(old);
        chars -= old.length;
        if (chars <= COUNTED_MAX_CHARS / 2) break;
      }
    return n;
  };
}
