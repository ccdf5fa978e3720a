import { claudeCode } from './claude-code/index.js';
import type { SourceAdapter } from './types.js';

/** Every log format replay-history reads, tried in this order on each file. */
export const adapters: readonly SourceAdapter[] = [claudeCode];
