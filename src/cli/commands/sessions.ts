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
    .description('list stored sessions, oldest first, each sub-agent under its parent')
    .option('--agent <agent>', `only this agent's sessions: ${agents.join(', ')} (e.g. --agent codex)`)
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Columns: id (a prefix is enough wherever an id is asked for), agent, kind, started, turns (model calls),
tool calls, title. A sub-agent (or compaction) session is listed right after its parent, its id indented
two spaces per level; one whose parent is not stored is listed on its own, as "subagent of <parent id>".
An abandoned rewind branch (kind branch: a trajectory the model produced before the user rewound) is listed
under the session it branched from; its turns and tool calls are its own, after the prefix it shares with it.
replay and export take branches only when asked (--branches) or named.
--json lists every session flat, oldest first; parentId links a sub-agent to its parent.

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
        for (const { row, depth } of nested([...store.list(filter)])) {
          rows.push([
            `${'  '.repeat(depth)}${row.id.slice(0, 12)}`,
            row.agent,
            // Under its parent the kind alone says it; on its own it names the parent that is not listed.
            row.kind === 'main' || depth > 0
              ? row.kind
              : `${row.kind} of ${row.parent_id?.slice(0, 8) ?? '?'}`,
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

type Listed = ReturnType<SessionStore['list']> extends Generator<infer T> ? T : never;

/**
 * The sessions in list order, each one's sub-sessions right after it (oldest first, recursively), with their
 * depth. A session whose parent is not among them stays where it is, at depth 0.
 */
function* nested(rows: Listed[]): Generator<{ row: Listed; depth: number }> {
  const ids = new Set(rows.map((row) => row.id));
  const children = new Map<string, Listed[]>();
  for (const row of rows) {
    if (row.parent_id === null || row.parent_id === row.id || !ids.has(row.parent_id)) continue;
    const siblings = children.get(row.parent_id) ?? [];
    siblings.push(row);
    children.set(row.parent_id, siblings);
  }
  const placed = new Set<string>();
  function* under(row: Listed, depth: number): Generator<{ row: Listed; depth: number }> {
    placed.add(row.id);
    yield { row, depth };
    for (const child of children.get(row.id) ?? []) if (!placed.has(child.id)) yield* under(child, depth + 1);
  }
  for (const row of rows) {
    const top = row.parent_id === null || row.parent_id === row.id || !ids.has(row.parent_id);
    if (top && !placed.has(row.id)) yield* under(row, 0);
  }
  // Parent links that loop (a damaged store) reach no top-level session: listed flat rather than lost.
  for (const row of rows) if (!placed.has(row.id)) yield* under(row, 0);
}

function toJson(row: Listed) {
  return {
    id: row.id,
    agent: row.agent,
    sourceId: row.source_id,
    kind: row.kind,
    parentId: row.parent_id,
    spawnedBy: row.spawned_by,
    continues: row.continues_session_id
      ? {
          sessionId: row.continues_session_id,
          nativeId: row.continues_native_id,
          ...(row.continues_line !== null && row.continues_line !== undefined
            ? { line: row.continues_line }
            : {}),
        }
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
