// How a replayed turn's tool calls compare with the original's. Pure.
import { isAbsolute, relative } from 'node:path/posix';
import { canonicalJson } from '../model/canonical-json.js';
import type { Match } from '../store/runs.js';
import type { ChatToolCall } from './chat.js';

export interface CallMatch {
  match: Match;
  predicted: number;
  original: number;
  /** Calls the model made that the original also made (exactly or after normalisation), as a multiset. */
  matched: number;
}

export interface NormalizeContext {
  /** The session's working directory: absolute paths under it compare equal to relative ones. */
  cwd?: string;
  /** Per tool, argument defaults: an argument given at its default equals one left out. */
  defaults?: (tool: string) => Record<string, unknown> | undefined;
  /** Per tool, arguments that only describe the call to the user (a shell command's `description`). */
  commentary?: (tool: string) => readonly string[] | undefined;
}

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * An argument value in a form that ignores what does not change a call's meaning: surrounding and repeated
 * whitespace, absolute vs cwd-relative paths, arguments given at their default value or as null, and
 * commentary (what the call says it does, which another agent's tool may not even take).
 */
export function normalizeInput(tool: string, input: unknown, context: NormalizeContext = {}): unknown {
  const defaults = context.defaults?.(tool) ?? {};
  const value = (item: unknown): unknown => {
    if (typeof item === 'string') {
      let text = item.trim().replace(/\s+/g, ' ');
      if (context.cwd && isAbsolute(text) && (text === context.cwd || text.startsWith(`${context.cwd}/`))) {
        text = relative(context.cwd, text) || '.';
      }
      return text.replace(/^\.\//, '');
    }
    if (Array.isArray(item)) return item.map(value);
    if (item !== null && typeof item === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, member] of Object.entries(item)) {
        if (member === null || member === undefined) continue;
        out[key] = value(member);
      }
      return out;
    }
    return item;
  };
  const normalized = value(input);
  if (normalized === null || typeof normalized !== 'object' || Array.isArray(normalized)) return normalized;
  const out = normalized as Record<string, unknown>;
  for (const key of context.commentary?.(tool) ?? []) delete out[key];
  for (const [key, fallback] of Object.entries(defaults)) {
    if (key in out && canonicalJson(out[key]) === canonicalJson(value(fallback))) delete out[key];
  }
  return out;
}

function exactKey(call: ChatToolCall): string {
  return `${call.function.name}\0${canonicalJson(parse(call.function.arguments))}`;
}

function normalizedKey(call: ChatToolCall, context: NormalizeContext): string {
  const name = call.function.name;
  return `${name}\0${canonicalJson(normalizeInput(name, parse(call.function.arguments), context))}`;
}

/** Size of the multiset intersection of two key lists. */
function overlap(a: string[], b: string[]): number {
  const counts = new Map<string, number>();
  for (const key of b) counts.set(key, (counts.get(key) ?? 0) + 1);
  let shared = 0;
  for (const key of a) {
    const left = counts.get(key) ?? 0;
    if (left > 0) {
      shared++;
      counts.set(key, left - 1);
    }
  }
  return shared;
}

/**
 * `none`: neither made a call. `exact`: the same calls (order of parallel calls ignored). `normalized`: the
 * same once paths, whitespace and defaults are normalised. `differs`: anything else.
 */
export function compareCalls(
  predicted: readonly ChatToolCall[],
  original: readonly ChatToolCall[],
  context: NormalizeContext = {},
): CallMatch {
  const counts = { predicted: predicted.length, original: original.length };
  if (predicted.length === 0 && original.length === 0) return { match: 'none', ...counts, matched: 0 };
  const exact = overlap(predicted.map(exactKey), original.map(exactKey));
  if (exact === predicted.length && exact === original.length)
    return { match: 'exact', ...counts, matched: exact };
  const loose = overlap(
    predicted.map((call) => normalizedKey(call, context)),
    original.map((call) => normalizedKey(call, context)),
  );
  const same = loose === predicted.length && loose === original.length;
  return { match: same ? 'normalized' : 'differs', ...counts, matched: loose };
}
