import { readHead, readJsonLines } from '../jsonl.js';
import type { FileResult, SourceAdapter, Warning } from '../types.js';
import { QwenChat } from './parse.js';
import { idFromName, isChatPath, qwenRoots } from './paths.js';
import { looksLikeQwen, readRecord } from './records.js';
import { continueChat } from './resume.js';

const sniffBytes = 64 * 1024;

/**
 * A Qwen Code session: a `.jsonl` whose first readable records carry `uuid`, `parentUuid`, `sessionId` and
 * Gemini-shaped `message.parts` (or a `systemPayload`); or any `.jsonl` under `.qwen/projects/<slug>/chats/`.
 * Claude Code records share the envelope but hold `message.content`, never `parts`: tried before Claude Code.
 */
function detect(file: string): boolean {
  if (!file.endsWith('.jsonl')) return false;
  if (isChatPath(file)) return true;
  const lines = readHead(file, sniffBytes).split('\n');
  // The last piece may be cut by the sniff window; it only counts if it is the whole file.
  if (lines.length > 1) lines.pop();
  for (const line of lines.slice(0, 20)) {
    if (line.trim() === '') continue;
    try {
      return looksLikeQwen(JSON.parse(line));
    } catch {
      // A bad line decides nothing; look at the next.
    }
  }
  return false;
}

function parseFile(file: string): FileResult {
  const warnings: Warning[] = [];
  const chat = new QwenChat(file, idFromName(file), warnings);
  const read = readJsonLines(file, warnings, (value, line) => {
    const record = readRecord(value);
    if (typeof record === 'string') return record;
    return chat.add(record, line);
  });
  const { sessions, notes, state } = chat.finish(read.nextLine);
  const result: FileResult = { sessions, spawns: [], warnings, notes, ...read };
  if (state) result.resume = { sessionId: state.sessionId, messages: state.count, state };
  return result;
}

export const qwen: SourceAdapter = {
  agent: 'qwen',
  version: '1',
  detect,
  defaultRoots: () => qwenRoots(),
  parseFile,
  continueFile: (file, from, stored) => continueChat(file, idFromName(file), from, stored),
};
