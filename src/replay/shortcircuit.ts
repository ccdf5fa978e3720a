// Answers a model's tool call from the recording. This module is pure on purpose: it imports nothing that
// could reach a shell, the file system or the network (a test checks its imports), so it cannot run a tool.
import { canonicalJson } from '../model/canonical-json.js';
import { callInput, type Message, type ToolResult } from '../model/session.js';
import { type NormalizeContext, normalizeInput } from './match.js';

export interface RecordedCall {
  name: string;
  input: unknown;
  result: ToolResult;
}

export interface NearCall {
  name: string;
  input: unknown;
  /** Argument names whose values differ (or `name` when the tool differs). */
  differs: string[];
}

export type Answer =
  | { kind: 'hit'; how: 'exact' | 'normalized' | 'repeat'; result: ToolResult }
  | { kind: 'miss'; nearest: NearCall[] };

function key(name: string, input: unknown): string {
  return `${name}\0${canonicalJson(input)}`;
}

/**
 * The recorded results of one session, to be handed out in order: the n-th identical call (same tool, same
 * canonical arguments) gets the n-th recorded result. A call that matches nothing exactly is tried again
 * after per-tool normalisation (paths relative to the session cwd, arguments at their default, whitespace).
 * A read-only call asked more often than it was recorded gets its last result again (reading twice is
 * reading once); no other call ever does.
 */
export class ShortCircuit {
  private readonly exact = new Map<string, ToolResult[]>();
  private readonly loose = new Map<string, ToolResult[]>();
  private readonly last = new Map<string, ToolResult>();
  private readonly calls: RecordedCall[] = [];
  /** Where each result sits in the two indexes, so handing it out removes it from both. */
  private readonly keys = new Map<ToolResult, { exact: string; loose: string }>();

  constructor(
    messages: readonly Message[],
    private readonly context: NormalizeContext & { readOnly: (tool: string) => boolean },
  ) {
    const results = new Map<string, ToolResult>();
    for (const message of messages) {
      for (const part of message.parts) if (part.type === 'tool_result') results.set(part.callId, part);
    }
    for (const message of messages) {
      for (const part of message.parts) {
        if (part.type !== 'tool_call') continue;
        const result = results.get(part.id);
        // A call that never got a result has nothing to give back: it is not in the recording.
        if (!result) continue;
        // Asked for in the form it was offered in (a free-form tool's text as {input}).
        const input = callInput(part);
        this.calls.push({ name: part.name, input, result });
        const keys = { exact: key(part.name, input), loose: this.looseKey(part.name, input) };
        this.keys.set(result, keys);
        push(this.exact, keys.exact, result);
        push(this.loose, keys.loose, result);
      }
    }
  }

  private looseKey(name: string, input: unknown): string {
    return key(name, normalizeInput(name, input, this.context));
  }

  answer(name: string, input: unknown): Answer {
    const looseKey = this.looseKey(name, input);
    const exact = this.exact.get(key(name, input))?.[0];
    if (exact) return this.hand(exact, 'exact', looseKey);
    const loose = this.loose.get(looseKey)?.[0];
    if (loose) return this.hand(loose, 'normalized', looseKey);
    const again = this.context.readOnly(name) ? this.last.get(looseKey) : undefined;
    if (again) return { kind: 'hit', how: 'repeat', result: again };
    return { kind: 'miss', nearest: this.nearest(name, input) };
  }

  /** Hands a result out once: it leaves both indexes, so a later identical call gets the next one. */
  private hand(result: ToolResult, how: 'exact' | 'normalized', askedKey: string): Answer {
    const keys = this.keys.get(result);
    if (keys) {
      remove(this.exact, keys.exact, result);
      remove(this.loose, keys.loose, result);
    }
    this.last.set(askedKey, result);
    return { kind: 'hit', how, result };
  }

  /** The recorded calls closest to a missed one: same tool first, fewest differing arguments. */
  private nearest(name: string, input: unknown, limit = 3): NearCall[] {
    const fields = (value: unknown) =>
      value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    const asked = fields(input);
    return this.calls
      .map((call) => {
        const had = fields(call.input);
        const differs = [...new Set([...Object.keys(asked), ...Object.keys(had)])]
          .filter((field) => canonicalJson(asked[field] ?? null) !== canonicalJson(had[field] ?? null))
          .sort();
        if (call.name !== name) differs.unshift('name');
        return { name: call.name, input: call.input, differs };
      })
      .sort((a, b) => a.differs.length - b.differs.length)
      .filter(
        (call, index, all) =>
          all.findIndex((other) => key(other.name, other.input) === key(call.name, call.input)) === index,
      )
      .slice(0, limit);
  }
}

function remove(map: Map<string, ToolResult[]>, k: string, result: ToolResult): void {
  const list = map.get(k);
  const at = list?.indexOf(result) ?? -1;
  if (list && at !== -1) list.splice(at, 1);
}

function push(map: Map<string, ToolResult[]>, k: string, result: ToolResult): void {
  const list = map.get(k);
  if (list) list.push(result);
  else map.set(k, [result]);
}
