// What the driver e2e tests read back: the lines of a pairs file, the chat-form pair the headless drivers (Qwen
// Code, Gemini CLI) write, and the demo workspace the Gemini CLI and Qwen Code fixtures were recorded in.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { root } from './cli.js';

/** The pairs of a pairs file, each line parsed; none when the file is not there. */
export function pairsOf<Line>(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
}

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

/** A pair in chat form, as the Qwen Code and Gemini CLI drivers write it. */
export interface ChatPairLine {
  session: string;
  agent: string;
  turn: number;
  mode: string;
  model: string;
  match: { tool_calls: string };
  sources: unknown;
  messages: ChatMessage[];
  tools: { function: { name: string } }[];
  completion: {
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  };
}

/**
 * The demo repository of the Gemini CLI and Qwen Code fixtures (their scripts/make-workspace.sh: one commit, a
 * README, notes.txt and src/app.py), made at `path`, which must be under a `projects/` folder (the script refuses
 * any other place, as it removes what is there first).
 */
export async function demoWorkspace(path: string): Promise<void> {
  const identity = { GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com' };
  await execa('bash', [join(root, 'test/fixtures/real/gemini-cli-0.61.0/scripts/make-workspace.sh'), path], {
    env: { ...identity, GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.com' },
  });
}
