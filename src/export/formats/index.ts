// The export formats by name: what `replay-history export --format NAME` renders with.
import type { Format } from '../sample.js';
import { axolotl } from './axolotl.js';
import { dpo } from './dpo.js';
import { openai } from './openai.js';
import { sharegpt } from './sharegpt.js';
import { renderTrl, trl } from './trl.js';

export type FormatName = Format['name'];

export const formats: Record<FormatName, Format> = { openai, trl, sharegpt, axolotl, dpo };

export const formatNames = Object.keys(formats) as FormatName[];

export class FormatNameError extends Error {}

export function isFormatName(name: string): name is FormatName {
  return Object.hasOwn(formats, name);
}

/**
 * The format for an export. TRL gets one row shape for the whole file (a dataset cannot mix `messages` rows with
 * prompt–completion rows): prompt–completion when only the end of each sample is trained, else `messages`.
 */
export function formatFor(name: string, choice?: { trainOn: string; unit: string }): Format {
  if (!isFormatName(name)) {
    throw new FormatNameError(`--format ${name}: not a format (use one of ${formatNames.join(', ')})`);
  }
  if (name === 'trl' && choice) {
    const shape =
      choice.trainOn === 'last' || (choice.trainOn === 'replayed' && choice.unit === 'model-turn')
        ? 'prompt-completion'
        : 'messages';
    return { name: 'trl', render: (sample) => renderTrl(sample, shape) };
  }
  return formats[name];
}
