// Harness text from the recording. Some of what Claude Code puts in a request is made by running tools or by
// the machine it runs on, not by the conversation: the `# Environment` block (working directory, git or not,
// OS), the git status, the todo list quoted in a reminder, files re-read after a compaction. A replay runs no
// tool and runs elsewhere, so these differ — and would tell the model of a world the recorded results do not
// describe. Where the turn's request was recorded (2.1.3xx request records), each such message is taken from
// it, and only when everything else in it — what the user typed, the model's calls, the results — is the
// same; what still differs is listed, so the pair says it. Pure.

import { authorOf, type WireBlock, type WireMessage } from '../../model/request.js';

/** Claude Code names the memory folder of the project under HOME, which a replay has elsewhere. */
const memoryPath = /(You have a persistent file-based memory at `)([^`]+)(`)/;

/**
 * The live system blocks with the memory path the recorded prompt named (the only part of 2.1.328's system
 * prompt that depends on HOME and the workspace path). The billing-header block Claude Code puts first, which
 * it does not record, stays as it is.
 */
export function systemFromRecording(live: readonly WireBlock[], recorded: readonly WireBlock[]): WireBlock[] {
  const named = recorded
    .map((block) => memoryPath.exec(String(block.text ?? ''))?.[2])
    .find((path) => path !== undefined);
  if (named === undefined) return [...live];
  return live.map((block) =>
    typeof block.text === 'string' && memoryPath.test(block.text)
      ? {
          ...block,
          text: block.text.replace(
            memoryPath,
            (_, head: string, _path: string, tail: string) => `${head}${named}${tail}`,
          ),
        }
      : block,
  );
}

/**
 * What of a request still differs from the recorded one: `system` (the blocks after Claude Code's billing
 * header), `tools`, and `messages[i]` for each message (see `fromRecording`).
 */
export function differences(
  live: { system?: unknown; tools?: unknown; messages: readonly WireMessage[] },
  recorded: { system: readonly WireBlock[]; tools: readonly unknown[] },
  differing: readonly number[],
): string[] {
  const out: string[] = [];
  const blocks = Array.isArray(live.system) ? (live.system as WireBlock[]) : [];
  const unheaded = blocks.filter(
    (block) => !String(block.text ?? '').startsWith('x-anthropic-billing-header:'),
  );
  if (JSON.stringify(unheaded) !== JSON.stringify(recorded.system)) out.push('system');
  if (JSON.stringify(live.tools ?? []) !== JSON.stringify(recorded.tools)) out.push('tools');
  for (const index of differing) out.push(`messages[${index}]`);
  return out;
}

/** The part of a message the harness did not write: its role and the blocks of the user, model and tools. */
function ownContent(message: WireMessage): string {
  const { by, injectedBlocks } = authorOf(message);
  if (by === 'harness') return `${message.role}:harness`;
  const blocks: WireBlock[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const skipped = new Set(injectedBlocks ?? []);
  const kept = blocks
    .filter((_, index) => !skipped.has(index))
    .map(({ cache_control: _mark, ...block }) => block);
  return `${message.role}:${JSON.stringify(kept)}`;
}

/** Without cache breakpoints: where Claude Code puts one is not what the message says. */
function withoutMarks(message: WireMessage): string {
  if (typeof message.content === 'string') return JSON.stringify(message);
  return JSON.stringify({
    ...message,
    content: message.content.map(({ cache_control: _mark, ...block }) => block),
  });
}

/**
 * The live messages with each one whose own content equals the recorded message at the same place taken from
 * the recording (the harness text with it), and the indexes of those that still differ from it (a message
 * the recording lacks counts too). The live message's cache breakpoints are kept where Claude Code put them.
 */
export function fromRecording(
  live: readonly WireMessage[],
  recorded: readonly WireMessage[],
): { messages: WireMessage[]; differs: number[] } {
  const differs: number[] = [];
  const messages = live.map((message, index) => {
    const original = recorded[index];
    if (!original) {
      differs.push(index);
      return message;
    }
    if (withoutMarks(message) === withoutMarks(original)) return message;
    if (ownContent(message) !== ownContent(original)) {
      differs.push(index);
      return message;
    }
    return withMarksOf(original, message);
  });
  return { messages, differs };
}

/** `original` with the cache breakpoint of `live` on its last block, where `live` had one on its last block. */
function withMarksOf(original: WireMessage, live: WireMessage): WireMessage {
  const last = Array.isArray(live.content) ? live.content.at(-1) : undefined;
  const mark = last?.cache_control;
  const content: WireMessage['content'] =
    typeof original.content === 'string'
      ? mark
        ? [{ type: 'text', text: original.content }]
        : original.content
      : original.content.map(({ cache_control: _mark, ...block }) => block as WireBlock);
  if (mark && Array.isArray(content)) {
    const end = content.length - 1;
    content[end] = { ...(content[end] as WireBlock), cache_control: mark };
  }
  return { ...original, content };
}
