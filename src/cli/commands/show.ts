import type { Command } from 'commander';
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
Injected text (written by the agent harness, not typed by a person) is marked. Each model turn is numbered
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
          if (options.json) writeOut(JSON.stringify(turn, null, 2));
          else {
            writeOut(turn.context.map(shown).join('\n'));
            writeOut(out.bold(`── turn ${options.turn}: the model answered ──`));
            writeOut(shown(turn.response));
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
    message.compaction ? 'compaction summary' : '',
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
    message.compaction
      ? out.yellow(`${title}\n   [the model saw nothing before this summary]`)
      : out.cyan(title),
  ];
  for (const part of message.parts) lines.push(renderPart(part));
  return lines.join('\n');
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
