import type { Command } from 'commander';
import { type Message, outputText, type Part } from '../../model/session.js';
import { splitTurns } from '../../model/turns.js';
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
      'print only the context model turn N (1-based) was given, and its answer',
      parseTurn,
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Injected text (written by the agent harness, not typed by a person) is marked. After a compaction the
model saw only the summary and what followed; --turn N prints exactly that context.

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
        if (options.turn !== undefined) {
          const turns = splitTurns(session.messages, own);
          const turn = turns[options.turn - 1];
          if (!turn)
            throw new UserError(
              `session ${row.id.slice(0, 12)} has ${turns.length} turn(s); no turn ${options.turn}`,
            );
          if (options.json) writeOut(JSON.stringify(turn, null, 2));
          else {
            writeOut(turn.context.map(render).join('\n'));
            writeOut(out.bold(`── turn ${options.turn}: the model answered ──`));
            writeOut(render(turn.response));
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
        writeOut(session.messages.map(render).join('\n'));
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

function render(message: Message): string {
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
  const title = `── ${message.role}${flags ? ` (${flags})` : ''} ${out.dim(where)}`;
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
