import type { Command } from 'commander';
import { agents } from '../../model/session.js';
import { openDb } from '../../store/db.js';
import { SessionStore } from '../../store/sessions.js';
import { UserError } from '../errors.js';
import { table, writeOut } from '../output.js';
import { dbOption, jsonOption } from './options.js';

export function registerSessions(program: Command): void {
  program
    .command('sessions')
    .description('list stored sessions, oldest first')
    .option('--agent <agent>', `only this agent's sessions (${agents.join(', ')})`)
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Columns: id (a prefix is enough wherever an id is asked for), agent, kind (sub-agents are indented
under the id of their parent), started, turns (model calls), tool calls, title.

Examples:
  $ replay-history sessions
  $ replay-history sessions --agent claude-code --json`,
    )
    .action((options: { db: string; json?: boolean; agent?: string }) => {
      if (options.agent && !(agents as readonly string[]).includes(options.agent)) {
        throw new UserError(`unknown agent '${options.agent}'`, `use one of: ${agents.join(', ')}`);
      }
      const db = openDb(options.db, { readOnly: true });
      try {
        const store = new SessionStore(db);
        const filter = options.agent ? { agent: options.agent } : {};
        if (options.json) {
          // Streamed: one session per line inside the array, so a large store is never held whole.
          process.stdout.write('[');
          let first = true;
          for (const row of store.list(filter)) {
            process.stdout.write(`${first ? '\n' : ',\n'}${JSON.stringify(toJson(row))}`);
            first = false;
          }
          process.stdout.write(first ? ']\n' : '\n]\n');
          return;
        }
        const rows: string[][] = [['ID', 'AGENT', 'KIND', 'STARTED', 'TURNS', 'TOOLS', 'TITLE']];
        for (const row of store.list(filter)) {
          rows.push([
            row.id.slice(0, 12),
            row.agent,
            row.kind === 'main' ? 'main' : `${row.kind} of ${row.parent_id?.slice(0, 8) ?? '?'}`,
            (row.started_at ?? '').replace('T', ' ').slice(0, 16),
            String(row.turn_count),
            row.unanswered_count
              ? `${row.tool_call_count} (${row.unanswered_count} unanswered)`
              : String(row.tool_call_count),
            (row.title ?? '').replace(/\s+/g, ' ').slice(0, 60),
          ]);
        }
        if (rows.length === 1) {
          process.stderr.write('no sessions stored yet; hint: replay-history ingest <path>\n');
          return;
        }
        writeOut(table(rows));
      } finally {
        db.close();
      }
    });
}

function toJson(row: ReturnType<SessionStore['list']> extends Generator<infer T> ? T : never) {
  return {
    id: row.id,
    agent: row.agent,
    sourceId: row.source_id,
    kind: row.kind,
    parentId: row.parent_id,
    spawnedBy: row.spawned_by,
    continues: row.continues_session_id
      ? { sessionId: row.continues_session_id, nativeId: row.continues_native_id }
      : null,
    cwd: row.cwd,
    title: row.title,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    version: row.version,
    sourceFile: row.source_file,
    messages: row.message_count,
    turns: row.turn_count,
    toolCalls: row.tool_call_count,
    unansweredToolCalls: row.unanswered_count,
  };
}
