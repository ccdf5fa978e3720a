import { closeSync, openSync, readSync } from 'node:fs';
import { readLines } from '../lines.js';
import type { FileResult, SourceAdapter, Warning } from '../types.js';
import { CodexRollout } from './parse.js';
import { codexRoots, idFromName, isRolloutName } from './paths.js';
import { readRecord, recordTypes } from './records.js';

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
  const fd = openSync(file, 'r');
  let head: string;
  try {
    const buffer = Buffer.alloc(sniffBytes);
    head = buffer.subarray(0, readSync(fd, buffer, 0, sniffBytes, 0)).toString('utf8');
  } finally {
    closeSync(fd);
  }
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
  let lines = 0;
  let skipped = 0;
  let parsedBytes = 0;
  const onOversize = ({ number, bytes }: { number: number; bytes: number }): void => {
    skipped++;
    warnings.push({ file, line: number, message: `line of ${bytes} bytes is over the size limit; skipped` });
  };
  for (const line of readLines(file, { onOversize })) {
    lines++;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (error) {
      if (!line.terminated) {
        // The writer has not finished this line yet: leave it for the next ingest.
        warnings.push({
          file,
          line: line.number,
          message: 'last line is incomplete (still being written?); not read yet',
        });
        lines--;
        break;
      }
      skipped++;
      warnings.push({
        file,
        line: line.number,
        message: `not valid JSON (${(error as Error).message}); skipped`,
      });
      parsedBytes = line.end;
      continue;
    }
    parsedBytes = line.end;
    if (line.invalidUtf8)
      warnings.push({ file, line: line.number, message: 'invalid UTF-8 replaced with U+FFFD' });
    const record = readRecord(value, lines === 1);
    if (record === 'state') continue;
    if (!record) {
      skipped++;
      warnings.push({
        file,
        line: line.number,
        message: 'not a rollout record (no "type" and "payload"); skipped',
      });
      continue;
    }
    rollout.add(record, line.number);
  }
  const { sessions, spawns, notes } = rollout.finish();
  return { sessions, spawns, warnings, notes, lines, skipped: skipped + rollout.skipped, parsedBytes };
}

export const codex: SourceAdapter = {
  agent: 'codex',
  detect,
  defaultRoots: () => codexRoots(),
  parseFile,
};
