import { readHead, readJsonLines } from '../jsonl.js';
import type { FileResult, SourceAdapter, Warning } from '../types.js';
import { CodexRollout } from './parse.js';
import { codexRoots, idFromName, isRolloutName } from './paths.js';
import { readRecord, recordTypes } from './records.js';
import { continueRollout } from './resume.js';

const sniffBytes = 64 * 1024;

/** How a rollout opens (serde writes `timestamp` then `type`): enough when the first line outgrows the sniff. */
const sessionMetaOpening = /^\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"session_meta"\s*,/;

/**
 * A Codex rollout: a `.jsonl` whose first record is a `session_meta` envelope; or, named `rollout-*.jsonl`, any
 * rollout record first (old builds opened with a bare SessionMeta). Claude Code lines carry no `payload`, so
 * they never match.
 */
function detect(file: string): boolean {
  if (!file.endsWith('.jsonl')) return false;
  let head = readHead(file, sniffBytes);
  head = head.trimStart();
  const newline = head.indexOf('\n');
  const first = newline === -1 ? head : head.slice(0, newline);
  if (sessionMetaOpening.test(first)) return true;
  let value: unknown;
  try {
    value = JSON.parse(first);
  } catch {
    return false;
  }
  const record = readRecord(value, true);
  if (record === undefined || record === 'state') return false;
  const enveloped = typeof (value as { payload?: unknown }).payload === 'object';
  if (record.type === 'session_meta' && enveloped) return true;
  return isRolloutName(file) && recordTypes.has(record.type);
}

function parseFile(file: string): FileResult {
  const warnings: Warning[] = [];
  const rollout = new CodexRollout(file, idFromName(file), warnings);
  const read = readJsonLines(file, warnings, (value, line, index) => {
    const record = readRecord(value, index === 0);
    if (record === 'state') return undefined;
    if (!record) return 'not a rollout record (no "type" and "payload")';
    rollout.add(record, line);
    return undefined;
  });
  const { sessions, spawns, notes, state } = rollout.finish(read.nextLine);
  const result: FileResult = {
    sessions,
    spawns,
    warnings,
    notes,
    ...read,
    skipped: read.skipped + rollout.skipped,
  };
  if (state) result.resume = { sessionId: state.sessionId, messages: state.count, state };
  return result;
}

export const codex: SourceAdapter = {
  agent: 'codex',
  version: '2',
  detect,
  defaultRoots: () => codexRoots(),
  parseFile,
  continueFile: (file, from, stored) => continueRollout(file, idFromName(file), from, stored),
};
