import type { Db } from '../../src/store/db.js';

/**
 * Everything ingest stored, as comparable rows: what two stores must share to be "the same store". Times of the
 * ingest itself (ingested_at, a file's mtime) are left out; everything read from the logs is in.
 */
export function dumpStore(db: Db): Record<string, unknown[]> {
  const all = (sql: string) => db.prepare(sql).all();
  return {
    sessions: all(
      `SELECT id, agent, source_id, kind, origin, parent_id, parent_tool_call_id, continues_session_id,
         continues_native_id, continues_line, cwd, title, started_at, ended_at, version, source_file, message_count,
         turn_count, tool_call_count, unanswered_count, meta_hash, requests_hash
       FROM sessions ORDER BY id`,
    ),
    messages: all(
      `SELECT session_id, seq, role, native_id, model, timestamp, injected, compaction, preserved, attachment, usage,
         parts, source, hash FROM messages ORDER BY session_id, seq`,
    ),
    spawns: all('SELECT child_id, parent_id, tool_call_id FROM spawns ORDER BY child_id'),
    // What a reader kept to continue each file, parsed: a continued read must leave the state a full read does.
    files: all(
      'SELECT path, agent, size, inode, parsed_bytes, parser, resume FROM source_files ORDER BY path',
    ).map((row) => {
      const { resume, ...rest } = row as { resume: string | null };
      return { ...rest, resume: resume === null ? null : JSON.parse(resume) };
    }),
    requests: all(
      `SELECT session_id, seq, record_id, response_id, shape_hash, params, base, keep, tail, cache_control, digest,
         line FROM requests ORDER BY session_id, seq`,
    ),
    shapes: all('SELECT session_id, hash, digest FROM request_shapes ORDER BY session_id, hash'),
    bodies: all('SELECT digest, system, tools FROM shape_bodies ORDER BY digest'),
    requestMessages: all(
      'SELECT session_id, hash, message, origin FROM request_messages ORDER BY session_id, hash',
    ),
  };
}
