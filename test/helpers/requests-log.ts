// The requests the model server logged while the real Claude Code 2.1.328 made the fixture sessions
// (test/fixtures/real/claude-code-2.1.328/requests.jsonl): each line's raw body parsed, beside its label.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cli.js';

export const claudeFixture = join(root, 'test', 'fixtures', 'real', 'claude-code-2.1.328');

export interface LoggedRequest<Body = Record<string, unknown>> {
  seq: number;
  /** `scripted`: a model turn; `compaction`: a compaction call. */
  kind: 'scripted' | 'compaction';
  /** The run and turn (`A1#0`) or the compaction (`compaction-A`). */
  label: string;
  headers: Record<string, string>;
  body: Body;
  answer: { id: string };
}

export function loggedRequests<Body = Record<string, unknown>>(): LoggedRequest<Body>[] {
  return readFileSync(join(claudeFixture, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const entry = JSON.parse(line) as Omit<LoggedRequest<Body>, 'body'> & { raw: string };
      const { raw, ...rest } = entry;
      return { ...rest, body: JSON.parse(raw) as Body };
    });
}
