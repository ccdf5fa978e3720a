import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readHead, readJsonLines } from '../jsonl.js';
import type { FileResult, SourceAdapter, Warning } from '../types.js';
import { ClaudeTranscript } from './parse.js';
import { claudeRoots, metaPathFor } from './paths.js';
import { isEnvelope } from './records.js';
import { continueTranscript } from './resume.js';

const sniffBytes = 64 * 1024;

/** A Claude Code transcript: JSON lines whose records carry a `type` and a `sessionId` or `uuid`. */
function detect(file: string): boolean {
  if (!file.endsWith('.jsonl')) return false;
  const head = readHead(file, sniffBytes);
  const lines = head.split('\n');
  // The last piece may be cut by the sniff window; it only counts if it is the whole file.
  if (lines.length > 1) lines.pop();
  for (const line of lines.slice(0, 50)) {
    try {
      const value = JSON.parse(line) as unknown;
      if (isEnvelope(value) && ('sessionId' in value || 'uuid' in value || 'leafUuid' in value)) return true;
    } catch {
      // A bad line decides nothing; look at the next.
    }
  }
  return false;
}

function readMeta(file: string, warnings: Warning[]): { toolUseId?: string; description?: string } {
  const path = metaPathFor(file);
  if (!existsSync(path)) return {};
  try {
    const meta = JSON.parse(readFileSync(path, 'utf8')) as { toolUseId?: unknown; description?: unknown };
    const out: { toolUseId?: string; description?: string } = {};
    if (typeof meta.toolUseId === 'string') out.toolUseId = meta.toolUseId;
    if (typeof meta.description === 'string') out.description = meta.description;
    return out;
  } catch (error) {
    warnings.push({ file: path, message: `unreadable sub-agent metadata: ${(error as Error).message}` });
    return {};
  }
}

/** Where a sub-agent of this transcript keeps its own file: `<session>/subagents/` now, beside it in older builds. */
function subagentFiles(file: string, agentId: string): string[] {
  const name = `agent-${agentId}.jsonl`;
  return [join(file.replace(/\.jsonl$/, ''), 'subagents', name), join(dirname(file), name)];
}

function parseFile(file: string): FileResult {
  const warnings: Warning[] = [];
  const transcript = new ClaudeTranscript(
    file,
    basename(file, '.jsonl'),
    readMeta(file, warnings),
    (_, agentId) => subagentFiles(file, agentId).some((path) => existsSync(path)),
  );
  const read = readJsonLines(file, warnings, (value, line) => {
    if (!isEnvelope(value)) return 'not a transcript record (no "type")';
    return transcript.add(value, line);
  });
  const finished = transcript.finish(read.nextLine);
  warnings.push(...finished.warnings);
  const result: FileResult = {
    sessions: finished.sessions,
    spawns: finished.spawns,
    warnings,
    notes: finished.notes,
    ...read,
  };
  if (finished.resume) result.resume = finished.resume;
  return result;
}

export const claudeCode: SourceAdapter = {
  agent: 'claude-code',
  // 2: a slash command's expanded prompt is the user's request
  // 3: request records read (each turn's exact request), rendered attachments kept as injected messages
  version: '3',
  detect,
  defaultRoots: () => claudeRoots(),
  parseFile,
  continueFile: (file, from, stored) => continueTranscript(file, basename(file, '.jsonl'), from, stored),
};
