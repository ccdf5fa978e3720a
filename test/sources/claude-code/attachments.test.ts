// Harness text Claude Code 2.1.328 logs as attachments with `rendered` text and a `renderedRole`: each becomes an
// injected message where the chain puts it. Expected counts come from the raw lines of the real fixture; the texts
// are checked against the requests the model server logged (test/fixtures/real/claude-code-2.1.328/requests.jsonl).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { claudeCode } from '../../../src/sources/claude-code/index.js';
import type { ParsedSession } from '../../../src/sources/types.js';
import { root } from '../../helpers/cli.js';

const fixture = join(root, 'test', 'fixtures', 'real', 'claude-code-2.1.328');
const file = join(
  fixture,
  'projects',
  '-home-ada-projects-demo-app',
  '5a5a5a5a-0001-4000-8000-00000000000a.jsonl',
);

interface RawLine {
  type: string;
  uuid?: string;
  renderedRole?: string;
  rendered?: { content: string }[];
  attachment?: { type: string };
}
const raw = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((text) => JSON.parse(text) as RawLine);

const sessions = [...claudeCode.parseFile(file).sessions] as ParsedSession[];
const main = sessions.find((s) => s.kind === 'main') as ParsedSession;
const fromAttachments = main.messages.filter((m) => m.attachment !== undefined);

const texts = (m: Message) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('rendered attachments', () => {
  it('every attachment line with rendered text is one injected message of its role, in chain order', () => {
    const rendered = raw.filter((line) => line.type === 'attachment' && Array.isArray(line.rendered));
    // 22 attachment lines, 18 of them rendered (the 4 prompt_snapshot lines are not sent to the model).
    expect(raw.filter((line) => line.type === 'attachment')).toHaveLength(22);
    expect(rendered).toHaveLength(18);
    expect(fromAttachments.map((m) => m.nativeId)).toEqual(rendered.map((line) => line.uuid));
    expect(fromAttachments.map((m) => [m.role, m.attachment])).toEqual(
      rendered.map((line) => [line.renderedRole, line.attachment?.type]),
    );
    expect(fromAttachments.every((m) => m.injected === true)).toBe(true);
  });

  it('holds the texts the model received: system ones without their reminder wrapper', () => {
    const first = JSON.parse(
      JSON.parse(readFileSync(join(fixture, 'requests.jsonl'), 'utf8').split('\n')[0] as string).raw,
    ) as { messages: { role: string; content: { text: string }[] }[] };
    const [prompt, system] = first.messages;
    // Claude Code joins consecutive system attachments with a blank line into one system message.
    const turn = splitTurns(main.messages)[0];
    const context = turn?.context ?? [];
    const systemTexts = context.filter((m) => m.role === 'system').map(texts);
    expect(systemTexts.join('\n\n')).toBe(system?.content[0]?.text);
    // The user-role reminders are the blocks before the prompt, verbatim (but the newline Claude Code adds
    // between merged blocks).
    const reminders = context.filter((m) => m.role === 'user' && m.attachment !== undefined).map(texts);
    expect(reminders).toEqual(prompt?.content.slice(0, 2).map((block) => block.text.replace(/\n$/, '')));
  });
});
