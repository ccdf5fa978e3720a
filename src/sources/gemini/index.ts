import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { readHead, readJsonLines } from '../jsonl.js';
import type { FileResult, SourceAdapter, StoredSession, Warning } from '../types.js';
import { type FileContext, GeminiConversation } from './parse.js';
import { geminiRoots, isSessionName, parentSessionOf, projectRootOf, siblingsOf } from './paths.js';
import { isObject, readRecord } from './records.js';
import { continueConversation, type GeminiState } from './resume.js';

const sniffBytes = 64 * 1024;

function firstLine(file: string): unknown {
  const head = readHead(file, sniffBytes).trimStart();
  const newline = head.indexOf('\n');
  try {
    return JSON.parse(newline === -1 ? head : head.slice(0, newline));
  } catch {
    return undefined;
  }
}

/** The session id a log names in its first record (metadata line, or the legacy object). */
function sessionIdOf(file: string): string | undefined {
  const value = file.endsWith('.json') ? legacyHead(file) : firstLine(file);
  return isObject(value) && typeof value.sessionId === 'string' ? value.sessionId : undefined;
}

function legacyHead(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A Gemini CLI log: a `.jsonl` whose first line is the metadata record (`sessionId`, `projectHash`,
 * `startTime`, no `type`), or a `session-*.jsonl` under `chats/` opening with any record of the format; or a
 * legacy single-JSON session (`{sessionId, projectHash, messages: […]}`).
 */
function detect(file: string): boolean {
  if (file.endsWith('.json')) {
    const head = readHead(file, sniffBytes).trimStart();
    return (
      head.startsWith('{') &&
      head.includes('"sessionId"') &&
      head.includes('"messages"') &&
      (head.includes('"projectHash"') || isSessionName(file))
    );
  }
  if (!file.endsWith('.jsonl')) return false;
  const value = firstLine(file);
  if (isObject(value) && typeof value.sessionId === 'string' && 'projectHash' in value && !('type' in value))
    return true;
  const underChats = isSessionName(file) || parentSessionOf(file) !== undefined;
  if (!underChats || !isObject(value)) return false;
  const record = readRecord(value);
  // Claude Code lines carry a `uuid`; Gemini's messages an `id`.
  return typeof record !== 'string' && !('uuid' in value);
}

/**
 * Another file of the same session that wins over this one: a resume that starts in another minute leaves a
 * stub (its header and the session context) under a new name; a legacy `.json` gets a `.jsonl` twin. The
 * longer file wins, the later name on a tie, so either order of ingest stores the session once.
 */
function supersededBy(file: string, id: string): string | undefined {
  const size = statSync(file).size;
  for (const other of siblingsOf(file)) {
    if (sessionIdOf(other) !== id) continue;
    const otherSize = statSync(other).size;
    if (otherSize > size || (otherSize === size && basename(other) > basename(file))) return other;
  }
  return undefined;
}

function contextOf(file: string, projectHash: unknown): FileContext {
  const context: FileContext = { file, fallbackId: basename(file).replace(/\.jsonl?$/, '') };
  const parent = parentSessionOf(file);
  if (parent) context.parentSessionId = parent;
  const cwd = projectRootOf(file, projectHash);
  if (cwd) context.cwd = cwd;
  return context;
}

function parseFile(file: string): FileResult {
  const warnings: Warning[] = [];
  const head = file.endsWith('.json') ? legacyHead(file) : firstLine(file);
  const conversation = new GeminiConversation(
    contextOf(file, isObject(head) ? head.projectHash : undefined),
    warnings,
  );
  const read = file.endsWith('.json')
    ? readLegacy(file, head, conversation, warnings)
    : readJsonLines(file, warnings, (value, line) => {
        const record = readRecord(value);
        if (typeof record === 'string') return record;
        conversation.add(record, line);
        return undefined;
      });
  const { state, ...result } = conversation.finish(
    'nextLine' in read ? (read.nextLine as number) : undefined,
  );
  const session = result.sessions[0];
  const winner = session && supersededBy(file, session.sourceId);
  if (winner) {
    result.sessions = [];
    result.spawns = [];
    result.notes.push(`the same session as ${basename(winner)}, which is longer: read from there`);
  }
  const parsed: FileResult = { ...result, warnings, ...read, skipped: read.skipped + conversation.skipped };
  if (state && !winner) parsed.resume = { sessionId: state.sessionId, messages: state.count, state };
  return parsed;
}

/**
 * A grown log read on from where the last read stopped. It held its session then (the state is kept only when
 * it did), and it still does unless another file of the same session is now longer.
 */
function continueFile(file: string, from: { offset: number; state: unknown }, stored: StoredSession) {
  const state = from.state as GeminiState;
  const id = typeof state.meta?.sessionId === 'string' ? state.meta.sessionId : undefined;
  if (id === undefined) return 'its metadata names no session';
  const winner = supersededBy(file, id);
  if (winner) return `${basename(winner)}, the same session, is longer now`;
  return continueConversation(file, contextOf(file, state.meta.projectHash), from, stored);
}

/** A legacy `session-*.json`: one object, its metadata beside `messages`, read as a log of one rewrite. */
function readLegacy(
  file: string,
  value: unknown,
  conversation: GeminiConversation,
  warnings: Warning[],
): { lines: number; skipped: number; parsedBytes: number } {
  const parsedBytes = statSync(file).size;
  if (!isObject(value)) {
    warnings.push({ file, line: 1, message: 'not valid JSON (a legacy session file); skipped' });
    return { lines: 1, skipped: 1, parsedBytes };
  }
  const { messages, ...meta } = value;
  conversation.add({ kind: 'metadata', value: meta }, 1);
  if (Array.isArray(messages)) conversation.add({ kind: 'set', value: { messages } }, 1);
  else warnings.push({ file, line: 1, message: 'legacy session without "messages"' });
  return { lines: 1, skipped: 0, parsedBytes };
}

export const gemini: SourceAdapter = {
  agent: 'gemini',
  version: '1',
  detect,
  defaultRoots: () => geminiRoots(),
  parseFile,
  continueFile,
  // Large outputs the model got in part are kept whole there, for the CLI's UI: never a session log.
  prune: (dir) => basename(dir) === 'tool-outputs',
};
