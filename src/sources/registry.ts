import { claudeCode } from './claude-code/index.js';
import { codex } from './codex/index.js';
import { dockerAgent } from './docker-agent/index.js';
import { gemini } from './gemini/index.js';
import { opencode } from './opencode/index.js';
import { qwen } from './qwen/index.js';
import type { SourceAdapter } from './types.js';

/**
 * Every log format replay-history reads, tried in this order on each file. The broadest detector (Claude Code:
 * any JSON lines with a `type` and a `sessionId`/`uuid`) goes last.
 */
export const adapters: readonly SourceAdapter[] = [codex, dockerAgent, opencode, qwen, gemini, claudeCode];
