import type { Command } from 'commander';
import { turnFidelity } from '../../model/fidelity.js';
import type { RequestMessage, TurnRequest, WireBlock } from '../../model/request.js';
import { type Message, outputText, type Part } from '../../model/session.js';
import { isModelTurn, type Turn, turns } from '../../model/turns.js';
import { openDb } from '../../store/db.js';
import { SessionStore } from '../../store/sessions.js';
import { UserError } from '../errors.js';
import { out, writeOut } from '../output.js';
import { dbOption, jsonOption } from './options.js';

export function registerShow(program: Command): void {
  program
    .command('show')
    .description('print a session’s transcript as the model saw it')
    .argument('<id-prefix>', 'a session id (or the agent’s own session id), or a unique prefix of one')
    .option(
      '--turn <n>',
      'print only what model turn N was given, and its answer: N as printed beside "assistant · turn N" ' +
        'and as a pairs file’s "turn" (e.g. --turn 4)',
      parseTurn,
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Injected text (written by the agent harness, not typed by a person) is marked. Where the log recorded the
request itself (Claude Code 2.1.3xx), --turn N shows that request: the system blocks, the tools and every
message the model received, each marked typed by the user, injected by the harness, written by the model or
tool results; elsewhere it shows the context rebuilt from the conversation and says what is not known (the
system prompt, the tools, …). --json gives "request" (null without records) and "fidelity". Each model turn is numbered
from 1 (a resumed session counts on from the turns it inherited), as --turn and the pairs file of a replay
number them. After a compaction the model saw only the summary and what followed; --turn N prints exactly
that context.

Examples:
  $ replay-history show 3f2a
  $ replay-history show 3f2a --turn 4 --json`,
    )
    .action((prefix: string, options: { db: string; json?: boolean; turn?: number }) => {
      const db = openDb(options.db, { readOnly: true });
      try {
        const store = new SessionStore(db);
        const row = store.resolve(prefix);
        const loaded = store.load(row.id);
        if (!loaded) throw new UserError(`session ${prefix} vanished while reading`);
        const { session, own } = loaded;
        const numbers = turnNumbers(session.messages);
        const shown = (message: Message) => render(message, numbers.get(message));
        if (options.turn !== undefined) {
          const { turn, count } = findTurn(session.messages, options.turn);
          if (!turn)
            throw new UserError(
              `session ${row.id.slice(0, 12)} has ${count} turn(s); no turn ${options.turn}`,
            );
          const nativeId = turn.response.nativeId;
          const request =
            nativeId !== undefined
              ? store.loadRequests(row.id, session.messages).byResponse.get(nativeId)
              : undefined;
          const fidelity = turnFidelity(turn, request);
          if (options.json)
            writeOut(
              JSON.stringify({ turn: options.turn, ...turn, fidelity, request: request ?? null }, null, 2),
            );
          else {
            if (request) writeOut(renderRequest(request, fidelity.rebuilt));
            else writeOut(turn.context.map(shown).join('\n'));
            writeOut(out.bold(`── turn ${options.turn}: the model answered ──`));
            writeOut(shown(turn.response));
            if (fidelity.notRebuilt.length > 0)
              writeOut(
                out.yellow(
                  `── context ${fidelity.rebuilt === 'partial' ? 'partly rebuilt' : `rebuilt from ${fidelity.rebuilt === 'attachments' ? 'the conversation and the harness text the log holds' : 'the conversation only'}`}; not known: ${fidelity.notRebuilt.join('; ')}`,
                ),
              );
          }
          return;
        }
        if (options.json) {
          writeOut(JSON.stringify({ ...session, inheritedMessages: own }, null, 2));
          return;
        }
        const header = [
          `session ${session.id}  ${session.agent}  ${session.kind}`,
          session.title ? `title   ${session.title}` : '',
          session.cwd ? `cwd     ${session.cwd}` : '',
          session.startedAt ? `started ${session.startedAt}` : '',
          own > 0 && session.continues
            ? `continues session ${session.continues.sessionId.slice(0, 12)} (its first ${own} messages are shared)`
            : '',
        ].filter(Boolean);
        writeOut(out.bold(header.join('\n')));
        writeOut(session.messages.map(shown).join('\n'));
      } finally {
        db.close();
      }
    });
}

function parseTurn(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UserError(`--turn takes a whole number from 1, not '${value}'`);
  return n;
}

/**
 * The number of each model turn, as `turns` counts them (Turn.index + 1, inherited turns included): what
 * --turn takes and what a pairs file's `turn` says.
 */
function turnNumbers(messages: readonly Message[]): Map<Message, number> {
  const numbers = new Map<Message, number>();
  for (const message of messages) if (isModelTurn(message)) numbers.set(message, numbers.size + 1);
  return numbers;
}

/** Turn `n`, built without the contexts of the turns after it; otherwise how many turns there are. */
function findTurn(messages: readonly Message[], n: number): { turn?: Turn; count: number } {
  let count = 0;
  for (const turn of turns(messages)) {
    count = turn.index + 1;
    if (count === n) return { turn, count };
  }
  return { count };
}

function render(message: Message, turn?: number): string {
  const flags = [
    message.injected ? 'injected' : '',
    message.attachment ? `${message.attachment} attachment` : '',
    message.compaction ? (message.attachment ? 'replaces the earlier context' : 'compaction summary') : '',
    message.model ?? '',
  ]
    .filter(Boolean)
    .join(', ');
  const where =
    'file' in message.source
      ? `${message.source.file}:${message.source.line}`
      : `${message.source.db}#${message.source.row}`;
  const title = `── ${message.role}${turn !== undefined ? ` · turn ${turn}` : ''}${flags ? ` (${flags})` : ''} ${out.dim(where)}`;
  const lines = [
    message.compaction ? out.yellow(`${title}\n   ${compactionNote(message)}`) : out.cyan(title),
  ];
  for (const part of message.parts) lines.push(renderPart(part));
  return lines.join('\n');
}

/** What a compaction summary left the model: nothing before it, or the earlier messages it kept. */
function compactionNote(summary: Message): string {
  const kept = (summary.preserved ?? []).filter((id) => id !== summary.nativeId).length;
  if (summary.attachment)
    return `[harness context that replaces its earlier copy; the model still saw the ${kept} earlier message(s) listed with it]`;
  return kept === 0
    ? '[the model saw nothing before this summary]'
    : `[from here on the model saw only this summary and the ${kept} earlier message(s) it kept, then what follows]`;
}

const authorLabel: Record<RequestMessage['by'], string> = {
  user: 'typed by the user',
  harness: 'injected by the harness',
  model: 'written by the model',
  tools: 'tool results',
};

/** The request a turn was sent, as the model received it: system blocks, tools, messages. */
function renderRequest(request: TurnRequest, rebuilt: string): string {
  const model = typeof request.params.model === 'string' ? ` for ${request.params.model}` : '';
  const lines = [
    out.bold(
      `── request${model} (${rebuilt}: rebuilt from the log's request records; the billing-header system block is not recorded)`,
    ),
  ];
  request.system.forEach((block, index) => {
    const text = typeof block.text === 'string' ? block.text : JSON.stringify(block);
    lines.push(out.cyan(`── system block ${index + 1} (${text.length} characters)`), text);
  });
  const names = request.tools.map((tool) => String((tool as { name?: unknown }).name ?? '?'));
  lines.push(out.cyan(`── tools (${names.length}): ${names.join(', ')}`));
  for (const message of request.messages) {
    const mixed = message.injectedBlocks?.length
      ? `, ${message.injectedBlocks.length} block(s) injected by the harness`
      : '';
    lines.push(
      out.cyan(`── ${message.role} · ${authorLabel[message.by]}${mixed} ${out.dim(message.origin)}`),
    );
    const blocks: WireBlock[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const block of blocks) lines.push(renderBlock(block));
  }
  if (request.missing.length > 0)
    lines.push(
      out.yellow(`── ${request.missing.length} message(s) not found: ${request.missing.join(', ')}`),
    );
  return lines.join('\n');
}

function renderBlock(block: WireBlock): string {
  switch (block.type) {
    case 'text':
      return String(block.text ?? '');
    case 'thinking':
      return out.dim(`[thinking] ${String(block.thinking ?? '')}`);
    case 'redacted_thinking':
      return out.dim('[redacted thinking]');
    case 'tool_use':
      return out.magenta(`→ ${String(block.name ?? '')}(${JSON.stringify(block.input ?? {})})`);
    case 'tool_result': {
      const content = block.content;
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((inner) => renderBlock(inner as WireBlock)).join('\n')
            : '';
      return `${out.magenta(`← ${String(block.tool_use_id ?? '')}${block.is_error === true ? ' [error]' : ''}`)}\n${text}`;
    }
    case 'image':
      return out.dim('[image]');
    default:
      return out.dim(JSON.stringify(block));
  }
}

function renderPart(part: Part): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'reasoning':
      return out.dim(part.redacted ? '[redacted thinking]' : `[thinking] ${part.text}`);
    case 'tool_call':
      return out.magenta(
        `→ ${part.name}(${JSON.stringify(part.input)})${part.unanswered ? ' [no result recorded]' : ''}`,
      );
    case 'tool_result': {
      const text = outputText(part.output);
      const head = out.magenta(`← ${part.name ?? part.callId}${part.isError ? ' [error]' : ''}`);
      return `${head}\n${text}`;
    }
    case 'image':
      return out.dim(`[image ${part.mediaType}]`);
  }
}
