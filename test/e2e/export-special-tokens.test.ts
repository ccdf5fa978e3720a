// A session whose text holds a special token's text (`<|endoftext|>`, `<|im_start|>`: a log of work on a
// tokenizer or a chat template) is exported like any other, its tokens counted as text, on the counting thread
// (no --max-tokens) and on the main thread (--max-tokens). Before, gpt-tokenizer's refusal ended the export.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { o200kByLibrary } from '../../src/export/tokenizer.js';
import { root, run, tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
const db = () => join(dir.path, 'store.db');
const words = ' what does <|endoftext|> mean, and <|im_start|>?';

beforeAll(async () => {
  dir = tempDir('export-special-');
  const lines = readFileSync(join(root, 'test/fixtures/claude-code/interrupted.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const record = JSON.parse(line);
      if (record.type === 'user' && typeof record.message?.content === 'string')
        record.message.content += words;
      return JSON.stringify(record);
    });
  mkdirSync(join(dir.path, 'logs'));
  writeFileSync(join(dir.path, 'logs', 'session.jsonl'), `${lines.join('\n')}\n`);
  const ingested = await run(['ingest', '--db', db(), join(dir.path, 'logs')]);
  expect(ingested.exitCode, ingested.stderr).toBe(0);
}, 60_000);
afterAll(() => dir?.remove());

describe('export of a session holding special tokens’ text', () => {
  for (const args of [[], ['--max-tokens', '100000']])
    it(`writes it and counts its tokens ${args.length ? 'to fit --max-tokens' : 'for the report'}`, async () => {
      const out = join(dir.path, `out-${args.length}.jsonl`);
      const result = await run(['export', '--db', db(), '--out', out, '--json', ...args]);
      expect(result.exitCode, result.stderr).toBe(0);
      const rows = readFileSync(out, 'utf8').trim().split('\n');
      expect(rows).toHaveLength(1);
      const row = JSON.parse(rows[0] as string) as { messages: { role: string; content: string }[] };
      const prompt = row.messages.find((message) => message.role === 'user');
      expect(prompt?.content).toContain('<|endoftext|>');
      const report = JSON.parse(result.stdout) as { tokens: { total: number } };
      expect(report.tokens.total).toBeGreaterThan(o200kByLibrary(words));
    });
});
