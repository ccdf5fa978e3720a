// Walks docker-agent's database one session at a time (so memory stays flat in the number of sessions) and
// turns each session's items into entries for the builder, counting items the way docker-agent indexes them.

import type { FileResult, ParsedSession } from '../types.js';
import type { Origin } from './convert.js';
import { type Entry, type SessionBuilder, type SessionMeta, type Tally, taskFrom } from './parse.js';
import type { ItemRow, SessionRow } from './records.js';
import type { Tables } from './tables.js';

export class DockerAgentReader {
  constructor(
    private readonly file: string,
    private readonly tables: Tables,
    private readonly result: FileResult,
    private readonly builder: SessionBuilder,
    private readonly tally: Tally,
  ) {}

  *sessions(): Generator<ParsedSession> {
    for (const row of this.tables.sessions()) {
      this.result.lines++;
      if (typeof row.id !== 'string' || row.id === '') {
        this.builder.skip(`sessions row (rowid ${row.rowid})`, 'no id; skipped');
        continue;
      }
      const items = this.tables.items(row.id);
      if (items.length > 0) {
        const session = this.builder.build(this.meta(row), this.entries(row.id, items));
        if (session) yield session;
      } else if (row.messages && !['', '[]'].includes(row.messages.trim())) {
        yield* this.legacy(row, row.messages);
      }
    }
    this.result.notes.push(...this.tally.notes());
  }

  private meta(row: SessionRow): SessionMeta {
    const meta: SessionMeta = { sourceId: row.id };
    if (row.parent_id) meta.parentSourceId = row.parent_id;
    if (row.title) meta.title = row.title;
    // Sub-sessions are stored without a working directory; they run in their parent's.
    const cwd = row.working_dir || (row.parent_id ? this.tables.workingDir(row.parent_id) : undefined);
    if (cwd) meta.cwd = cwd;
    if (row.created_at) meta.createdAt = row.created_at;
    return meta;
  }

  /**
   * `index` follows docker-agent's loaded item list, which `first_kept_entry` points into: it holds messages,
   * summaries, errors, terminations and sub-sessions that still exist, and drops unknown kinds.
   */
  private entries(sessionId: string, items: ItemRow[]): Entry[] {
    const entries: Entry[] = [];
    let index = 0;
    for (const item of items) {
      this.result.lines++;
      const where = `session_items row ${item.id}`;
      const origin: Origin = {
        nativeId: `${sessionId}/${item.id}`,
        source: { db: this.file, table: 'session_items', row: String(item.id) },
        implicit: Number(item.implicit) === 1,
      };
      switch (item.item_type) {
        case 'message': {
          const parsed = parseJson(item.message_json);
          if ('problem' in parsed) entries.push({ kind: 'bad', where, problem: parsed.problem });
          else {
            const agentName = item.agent_name || undefined;
            entries.push({ kind: 'message', raw: parsed.value, agentName, origin, index, where });
          }
          index++;
          break;
        }
        case 'summary':
          if (item.summary_text) {
            const firstKept = item.first_kept_entry ?? 0;
            entries.push({ kind: 'summary', text: item.summary_text, firstKept, origin, index });
          } else entries.push({ kind: 'bad', where, problem: 'summary item without summary_text' });
          index++;
          break;
        case 'subsession': {
          const child = item.subsession_id;
          if (!child || !this.tables.has(child)) {
            this.tally.danglingSubsessions++;
            break;
          }
          const task = () =>
            taskFrom(
              this.tables.opening(child).map((row) => ({
                raw: parseJson(row.message_json).value,
                implicit: Number(row.implicit) === 1,
              })),
            );
          entries.push({ kind: 'subsession', childId: child, task, index });
          index++;
          break;
        }
        case 'error':
        case 'termination':
          this.tally.outOfConversation++;
          index++;
          break;
        default:
          this.tally.unknownKinds.set(item.item_type, (this.tally.unknownKinds.get(item.item_type) ?? 0) + 1);
      }
    }
    return entries;
  }

  /** A session stored before migration 015: its items are the JSON array in `sessions.messages`. */
  private *legacy(row: SessionRow, json: string): Generator<ParsedSession> {
    const where = `sessions row ${row.id}`;
    const parsed = parseJson(json);
    if ('problem' in parsed) return this.builder.skip(where, `messages: ${parsed.problem}; skipped`);
    if (!Array.isArray(parsed.value))
      return this.builder.skip(where, 'messages is not a JSON array; skipped');
    yield* this.legacySession(this.meta(row), parsed.value, `${row.id}/messages`);
  }

  private *legacySession(meta: SessionMeta, items: unknown[], path: string): Generator<ParsedSession> {
    const { entries, children } = this.builder.legacyEntries(items, path);
    const session = this.builder.build(meta, entries);
    if (session) yield session;
    for (const { session: child, path: childPath } of children) {
      const id = child.id as string;
      // Migration 015 gave embedded sub-sessions rows of their own; those are read as sessions themselves.
      if (this.tables.has(id)) continue;
      const childMeta: SessionMeta = { sourceId: id, parentSourceId: meta.sourceId };
      if (typeof child.title === 'string' && child.title) childMeta.title = child.title;
      const cwd = (typeof child.working_dir === 'string' && child.working_dir) || meta.cwd;
      if (cwd) childMeta.cwd = cwd;
      if (typeof child.created_at === 'string') childMeta.createdAt = child.created_at;
      yield* this.legacySession(childMeta, Array.isArray(child.messages) ? child.messages : [], childPath);
    }
  }
}

function parseJson(json: string | null): { value: unknown } | { problem: string; value?: undefined } {
  if (json === null || json === '') return { problem: 'no JSON in message_json' };
  try {
    return { value: JSON.parse(json) as unknown };
  } catch (error) {
    return { problem: `not valid JSON (${(error as Error).message})` };
  }
}
