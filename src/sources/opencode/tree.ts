// The JSON generations: the storage tree opencode wrote up to 1.1.x (`storage/session|message|part/…`, ids
// taken from file names, as opencode's own json-migration.ts does) and the JSON `opencode export` prints.

import { existsSync, readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Fingerprint, ParsedSession, Spawn, Warning } from '../types.js';
import { openDatabase } from './database.js';
import { buildSession, type Tally } from './parse.js';
import { isDatabaseName, messageDir, partDir, treeSession } from './paths.js';
import {
  byTimeThenId,
  isObject,
  messageInfo,
  partData,
  type RawMessage,
  type SessionInfo,
  sessionInfo,
} from './records.js';

export interface JsonRead {
  sessions: ParsedSession[];
  spawns: Spawn[];
  counts: { rows: number; skipped: number };
}

function listJson(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/** The databases beside a storage tree, newest generation: a session with messages in one is read from there. */
const databaseSessions = new Map<string, { key: string; ids: Set<string> }>();

function storedInDatabase(dataDir: string, session: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dataDir).filter(isDatabaseName).sort();
  } catch {
    return undefined;
  }
  for (const name of names) {
    const file = join(dataDir, name);
    if (idsIn(file).has(session)) return name;
  }
  return undefined;
}

/** Session ids with conversation in a database, cached while the database and its -wal are unchanged. */
function idsIn(file: string): Set<string> {
  const key = [file, `${file}-wal`]
    .map((path) => {
      try {
        const stat = statSync(path);
        return `${stat.size}:${stat.mtimeMs}`;
      } catch {
        return '-';
      }
    })
    .join('/');
  const cached = databaseSessions.get(file);
  if (cached?.key === key) return cached.ids;
  const ids = new Set<string>();
  try {
    const { db, close } = openDatabase(file);
    try {
      const tables = new Set(
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
      );
      const queries: string[] = [];
      if (tables.has('message')) queries.push('SELECT DISTINCT session_id FROM message');
      if (tables.has('session_message'))
        queries.push(
          "SELECT DISTINCT session_id FROM session_message WHERE type IN ('user', 'assistant', 'compaction')",
        );
      for (const query of queries) for (const id of db.prepare(query).pluck().all() as string[]) ids.add(id);
    } finally {
      close();
    }
  } catch {
    // An unreadable database holds nothing we could read instead; its own unit reports the problem.
  }
  databaseSessions.set(file, { key, ids });
  return ids;
}

/** One session of the storage tree: its session file, message files and part files. */
export function readTreeSession(file: string, warnings: Warning[], tally: Tally): JsonRead {
  const where = treeSession(file);
  if (!where) throw new Error('not a storage-tree session file');
  const counts = { rows: 1, skipped: 0 };
  let value: unknown;
  try {
    value = readJson(file);
  } catch (error) {
    throw new Error(`not valid JSON (${(error as Error).message})`);
  }
  const info = sessionInfo(isObject(value) ? { ...value, id: where.sessionId } : undefined);
  if (!info) throw new Error('not an opencode session (no session object)');
  const newer = storedInDatabase(dirname(where.storage), info.id);
  if (newer) return { sessions: [], spawns: [], counts };

  const messages: RawMessage[] = [];
  const dir = messageDir(where.storage, info.id);
  for (const name of listJson(dir)) {
    const path = join(dir, name);
    counts.rows++;
    const id = basename(name, '.json');
    let message: unknown;
    try {
      message = readJson(path);
    } catch (error) {
      counts.skipped++;
      warnings.push({ file: path, message: `not valid JSON (${(error as Error).message}); skipped` });
      continue;
    }
    const messageData = messageInfo(message);
    if (!messageData) {
      counts.skipped++;
      warnings.push({ file: path, message: 'not an opencode message (no role user/assistant); skipped' });
      continue;
    }
    const raw: RawMessage = { id, info: messageData, parts: [], source: { file: path, line: 1 } };
    const parts = partDir(where.storage, id);
    for (const partName of listJson(parts)) {
      const partPath = join(parts, partName);
      counts.rows++;
      let part: unknown;
      try {
        part = readJson(partPath);
      } catch (error) {
        counts.skipped++;
        warnings.push({ file: partPath, message: `not valid JSON (${(error as Error).message}); skipped` });
        continue;
      }
      const data = partData(part);
      if (!data) {
        counts.skipped++;
        warnings.push({ file: partPath, message: 'not an opencode part (no type); skipped' });
        continue;
      }
      raw.parts.push({ ...data, id: basename(partName, '.json') });
    }
    messages.push(raw);
  }
  messages.sort(byTimeThenId);
  const built = buildSession(info, messages, { origin: 'file', tally });
  return { sessions: built.session.messages.length > 0 ? [built.session] : [], spawns: built.spawns, counts };
}

/**
 * What says a tree session is unchanged: its session file, message files and part files (and their folders,
 * whose mtime moves when a file is added or removed). Sizes are summed, the newest mtime taken, and the
 * session file's inode mixed with a hash of the file names so a renamed or removed file shows too.
 */
export function treeFingerprint(file: string, stat: Stats): Fingerprint {
  const where = treeSession(file);
  let size = stat.size;
  let mtimeMs = stat.mtimeMs;
  let hash = 2166136261;
  const mix = (text: string): void => {
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
  };
  const add = (path: string): void => {
    try {
      const entry = statSync(path);
      size += entry.isFile() ? entry.size : 0;
      mtimeMs = Math.max(mtimeMs, entry.mtimeMs);
      mix(path);
    } catch {
      // Gone meanwhile: the names hash still changes.
    }
  };
  if (where) {
    const messages = messageDir(where.storage, where.sessionId);
    if (existsSync(messages)) add(messages);
    for (const name of listJson(messages)) {
      add(join(messages, name));
      const parts = partDir(where.storage, basename(name, '.json'));
      add(parts);
      for (const part of listJson(parts)) add(join(parts, part));
    }
  }
  return { size, mtimeMs, ino: (stat.ino ^ hash) >>> 0 };
}

const exportHead =
  /^\s*(\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_|\[\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"msg_)/;

/** `opencode export` output (`{info, messages: [{info, parts}]}`), or the API's `[{info, parts}]` list. */
export function looksLikeExport(head: string): boolean {
  return exportHead.test(head);
}

/**
 * An export is a copy of a session: it is read with origin `mirror`, so a session read from opencode's own
 * store (database or tree) replaces it and is never replaced by it.
 */
export function readExport(file: string, warnings: Warning[], tally: Tally): JsonRead {
  const text = readFileSync(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`not valid JSON (${(error as Error).message})`);
  }
  const entries = Array.isArray(value) ? value : isObject(value) ? value.messages : undefined;
  if (!Array.isArray(entries)) throw new Error('not an opencode export (no messages list)');
  const counts = { rows: 0, skipped: 0 };
  const lineOf = (id: string): number => {
    const at = text.indexOf(`"${id}"`);
    return at === -1 ? 1 : text.slice(0, at).split('\n').length;
  };
  let info: SessionInfo | undefined =
    isObject(value) && !Array.isArray(value) ? sessionInfo(value.info) : undefined;
  const messages: RawMessage[] = [];
  entries.forEach((entry, index) => {
    counts.rows++;
    const messageData = isObject(entry) ? messageInfo(entry.info) : undefined;
    const id = isObject(entry) && isObject(entry.info) ? entry.info.id : undefined;
    if (!messageData || typeof id !== 'string') {
      counts.skipped++;
      warnings.push({
        file,
        message: `messages[${index}]: not an opencode message (info with id and role); skipped`,
      });
      return;
    }
    const sessionOf = (entry.info as { sessionID?: unknown }).sessionID;
    if (!info && typeof sessionOf === 'string') info = { id: sessionOf };
    const raw: RawMessage = { id, info: messageData, parts: [], source: { file, line: lineOf(id) } };
    const parts = isObject(entry) && Array.isArray(entry.parts) ? entry.parts : [];
    parts.forEach((part, partIndex) => {
      counts.rows++;
      const data = partData(part);
      const partId = isObject(part) ? part.id : undefined;
      if (!data || typeof partId !== 'string') {
        counts.skipped++;
        warnings.push({
          file,
          line: lineOf(id),
          message: `messages[${index}].parts[${partIndex}]: not an opencode part (id and type); skipped`,
        });
        return;
      }
      raw.parts.push({ ...data, id: partId });
    });
    messages.push(raw);
  });
  if (!info) throw new Error('not an opencode export (no session id)');
  messages.sort(byTimeThenId);
  const built = buildSession(info, messages, { origin: 'mirror', tally });
  return { sessions: built.session.messages.length > 0 ? [built.session] : [], spawns: built.spawns, counts };
}
