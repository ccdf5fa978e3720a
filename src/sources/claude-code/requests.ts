// Claude Code's request records (2.1.3xx): `api-request-shape` (system blocks and tools, by shape hash),
// `api-request-blob` (a message no user/assistant line holds, by its hash) and `api-request` (params, and the
// messages as `keep` messages of the base request plus `tail` hashes). See README.md, "Request records".

import {
  type CacheMark,
  messageHash,
  type RequestLog,
  type RequestRecord,
  type RequestShape,
  type WireBlock,
  type WireMessage,
} from '../../model/request.js';
import type { Envelope } from './records.js';

/** The lines of the three record types, as far as they are read. */
export interface RequestLine extends Envelope {
  id?: unknown;
  shapeHash?: unknown;
  shape?: { system?: unknown; tools?: unknown };
  hash?: unknown;
  params?: unknown;
  base?: unknown;
  keep?: unknown;
  tail?: unknown;
  cacheControl?: unknown;
  requestDigest?: unknown;
}

/** A record while its file is read: the response it produced is the next assistant line of its stream. */
export interface PendingRecord extends RequestRecord {
  responseMessageId?: string;
}

/** A line that is not a well-formed record is a problem with that line: the reason, or undefined when fine. */
export function readRecord(value: RequestLine, line: number): PendingRecord | string {
  if (typeof value.id !== 'string') return 'api-request without an id';
  if (!Array.isArray(value.tail) || !value.tail.every((hash) => typeof hash === 'string'))
    return 'api-request without a tail of hashes';
  const record: PendingRecord = {
    id: value.id,
    shapeHash: typeof value.shapeHash === 'string' ? value.shapeHash : '',
    params: isObject(value.params) ? value.params : {},
    keep: typeof value.keep === 'number' && Number.isInteger(value.keep) && value.keep >= 0 ? value.keep : 0,
    tail: value.tail as string[],
    cacheControl: Array.isArray(value.cacheControl) ? (value.cacheControl.filter(isMark) as CacheMark[]) : [],
    line,
  };
  if (typeof value.base === 'string') record.base = value.base;
  if (typeof value.requestDigest === 'string') record.digest = value.requestDigest;
  return record;
}

/**
 * Takes one line of the record family: a shape or blob goes into `into`, a request record is returned; a string
 * is why the line is not a well-formed record (it is skipped). Other types of the family are passed over.
 */
export function takeRequestLine(
  value: RequestLine,
  line: number,
  into: { shapes: Map<string, RequestShape>; blobs: Map<string, WireMessage> },
): PendingRecord | string | undefined {
  switch (value.type) {
    case 'api-request-shape': {
      const shape = readShape(value);
      if (!shape) return 'api-request-shape without a shapeHash, system and tools';
      into.shapes.set(shape.hash, shape.shape);
      return undefined;
    }
    case 'api-request-blob': {
      const blob = readBlob(value);
      if (!blob) return 'api-request-blob without a hash and a message';
      into.blobs.set(blob.hash, blob.message);
      return undefined;
    }
    case 'api-request':
      return readRecord(value, line);
    default:
      // Another record type of the family (counted as unknown by the reader).
      return undefined;
  }
}

/** The envelope a record's stream is found by: sub-agent records carry the agent's id but not isSidechain. */
export function recordEnvelope(value: RequestLine): Envelope {
  return { ...value, isSidechain: typeof value.agentId === 'string' };
}

export function readShape(value: RequestLine): { hash: string; shape: RequestShape } | undefined {
  const { shapeHash, shape } = value;
  if (typeof shapeHash !== 'string' || !shape || !Array.isArray(shape.system) || !Array.isArray(shape.tools))
    return undefined;
  return { hash: shapeHash, shape: { system: shape.system as WireBlock[], tools: shape.tools } };
}

export function readBlob(
  value: RequestLine & { message?: unknown },
): { hash: string; message: WireMessage } | undefined {
  if (typeof value.hash !== 'string' || !isWireMessage(value.message)) return undefined;
  return { hash: value.hash, message: value.message };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isMark(value: unknown): boolean {
  return isObject(value) && Array.isArray(value.path);
}

function isWireMessage(value: unknown): value is WireMessage {
  if (!isObject(value)) return false;
  const { role, content } = value;
  return (
    (role === 'user' || role === 'assistant' || role === 'system') &&
    (typeof content === 'string' || Array.isArray(content))
  );
}

/** A conversation line of the stream, in file order. */
export interface ConversationLine {
  env: Envelope;
  order: number;
}

/**
 * The stream's request log: its records (each tied to the response that followed it), the shapes they use,
 * and each tail hash resolved to a blob or to a message built from the transcript's own lines — one user line,
 * the assistant lines of one API response merged, or consecutive user lines merged (parallel tool results).
 * Lines are hashed only until every hash is found, and only when some hash is not a blob.
 */
export function buildRequestLog(
  records: PendingRecord[],
  lines: ConversationLine[],
  shapes: Map<string, RequestShape>,
  blobs: Map<string, WireMessage>,
  nativeIdOf: (messageId: string) => string | undefined,
): RequestLog {
  const log: RequestLog = { records: [], shapes: {}, messages: {} };
  const wanted = new Set<string>();
  for (const pending of records) {
    const { responseMessageId, ...record } = pending;
    const responseId = responseMessageId !== undefined ? nativeIdOf(responseMessageId) : undefined;
    if (responseId !== undefined) record.responseId = responseId;
    log.records.push(record);
    const shape = shapes.get(record.shapeHash);
    if (shape) log.shapes[record.shapeHash] = shape;
    for (const hash of record.tail) {
      const blob = blobs.get(hash);
      if (blob) log.messages[hash] = { message: blob, origin: 'blob' };
      else wanted.add(hash);
    }
  }
  if (wanted.size > 0) findInTranscript(lines, wanted, log);
  return log;
}

/**
 * Resolves the `wanted` hashes to messages built from `lines` (taken out of `wanted` as they are found), in the
 * order a full read tries them: responses, whole runs of user lines, their lines alone, parts of runs.
 */
export function findInTranscript(lines: ConversationLine[], wanted: Set<string>, log: RequestLog): void {
  const offer = (message: WireMessage): boolean => {
    const hash = messageHash(message);
    if (wanted.has(hash)) {
      wanted.delete(hash);
      log.messages[hash] = { message, origin: 'transcript' };
    }
    return wanted.size === 0;
  };
  const sorted = lines.slice().sort((a, b) => a.order - b.order);
  // One API response is written as several assistant lines: their blocks, merged in file order.
  const responses = new Map<string, WireBlock[]>();
  for (const { env } of sorted) {
    if (env.type !== 'assistant' || !Array.isArray(env.message?.content)) continue;
    const id = env.message.id ?? env.uuid ?? '';
    const blocks = responses.get(id);
    if (blocks) blocks.push(...(env.message.content as WireBlock[]));
    else responses.set(id, [...(env.message.content as WireBlock[])]);
  }
  for (const content of responses.values()) if (offer({ role: 'assistant', content })) return;

  // Consecutive user lines are sent as one message (the results of parallel calls): a run is tried whole
  // first, its lines alone only if that fails; a user line on its own is its own message.
  const runs: Envelope[][] = [];
  let run: Envelope[] = [];
  for (const { env } of sorted) {
    if (env.type === 'user' && env.message?.content !== undefined) run.push(env);
    else if (env.type === 'assistant' || env.type === 'system') {
      if (run.length > 0) runs.push(run);
      run = [];
    }
  }
  if (run.length > 0) runs.push(run);
  const single = (env: Envelope): WireMessage => ({
    role: 'user',
    content: env.message?.content as WireMessage['content'],
  });
  for (const whole of runs)
    if (offer(whole.length === 1 ? single(whole[0] as Envelope) : merged(whole))) return;
  for (const whole of runs) if (whole.length > 1) for (const env of whole) if (offer(single(env))) return;
  // Rarer: only part of a run was sent as one message.
  for (const whole of runs.filter((r) => r.length > 2))
    for (let from = 0; from < whole.length; from++)
      for (let to = from + 2; to <= whole.length; to++) {
        if (from === 0 && to === whole.length) continue;
        if (offer(merged(whole.slice(from, to)))) return;
      }
}

function merged(run: Envelope[]): WireMessage {
  const content: WireBlock[] = [];
  for (const env of run) {
    const c = env.message?.content;
    if (typeof c === 'string') content.push({ type: 'text', text: c });
    else if (Array.isArray(c)) content.push(...(c as WireBlock[]));
  }
  return { role: 'user', content };
}
