// Eliding repeated read-only tool results from a context (`--elide-repeats`). A transform over what the model is
// shown, never a cache: every result still comes from the recording, and only a result byte-identical to the one
// the model already has in front of it for the same tool and arguments is replaced by a one-line marker. Pure.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../model/canonical-json.js';
import { type AgentId, type Message, outputText, type Part, type ToolResult } from '../model/session.js';
import { isReadOnly } from './catalogue/index.js';

/** The marker's wording, in one place. It says the tool did run, so a model does not take it for a stale cache. */
export function elisionMarker(earlierCallId: string): string {
  return `[The tool ran again with the same arguments and returned output identical to its earlier result (call ${earlierCallId}): nothing has changed, and that output is current.]`;
}

/** What an agent left in place of an output it cleared from the context (opencode's pruning). */
export const clearedOutputs = new Set(['[Old tool result content cleared]']);

/**
 * Outputs an agent cut before showing them: what the model saw was not the whole output. Claude Code cuts long
 * Bash output in the middle ("... [2937 characters truncated] ..."); Codex marks "…N tokens truncated…"; opencode
 * ends with "The tool call succeeded but the output was truncated".
 */
const agentTruncation = [
  /\.\.\. \[\d+ characters truncated\] \.\.\./,
  /…\d+ tokens truncated…/,
  /The tool call succeeded but the output was truncated/,
];

/** The note our own size limit puts after a cut result. */
export function truncationNote(shownBytes: number, totalBytes: number): string {
  return `\n[… output cut by replay-history: ${totalBytes - shownBytes} of ${totalBytes} bytes not shown]`;
}

export interface ElideOptions {
  /** Tools whose repeats may be elided: our catalogue's read-only allow-list, plus what the user added. */
  readOnly: (name: string) => boolean;
  /** Our own limit on one result shown to the model (UTF-8 bytes): a longer one is cut, and then never elided. */
  maxResultBytes?: number;
  /** Baselines kept per context; past it the oldest is forgotten (its next repeat is then shown in full). */
  maxKeys?: number;
}

/** What a run asked for: `--elide-repeats`, `--elide-tool`, `--max-result-bytes`. */
export interface ShownSettings {
  elideRepeats: boolean;
  /** Tools the user declared read-only on top of our catalogue's. */
  extraTools: readonly string[];
  maxResultBytes?: number;
}

/** The options for one agent's sessions, or undefined when the context is shown as recorded. */
/**
 * Read-only tools that report what is *new* since the last call (output of a background process or agent): two
 * identical results there mean more of the same output, not "nothing has changed", so they are never elided.
 */
const incremental: Partial<Record<AgentId, ReadonlySet<string>>> = {
  'claude-code': new Set(['BashOutput', 'TaskOutput']),
  'docker-agent': new Set(['view_background_job', 'view_background_agent', 'wait_background_agents']),
};

export function elideOptions(agent: AgentId, settings: ShownSettings | undefined): ElideOptions | undefined {
  if (!settings || (!settings.elideRepeats && settings.maxResultBytes === undefined)) return undefined;
  const extra = new Set(settings.extraTools);
  const skipped = incremental[agent];
  const elidable = (name: string) =>
    extra.has(name) || (isReadOnly(agent, name) && !(skipped?.has(name) ?? false));
  return {
    readOnly: settings.elideRepeats ? elidable : () => false,
    ...(settings.maxResultBytes !== undefined ? { maxResultBytes: settings.maxResultBytes } : {}),
  };
}

/** Totals over fates: results elided and the bytes that saved (cut results count their saving too). */
export function savings(fates: readonly ResultFate[]): {
  elided: number;
  truncated: number;
  bytesSaved: number;
} {
  let elided = 0;
  let truncated = 0;
  let bytesSaved = 0;
  for (const fate of fates) {
    if (fate.fate === 'elided') elided++;
    if (fate.fate === 'truncated') truncated++;
    bytesSaved += fate.bytes - fate.shownBytes;
  }
  return { elided, truncated, bytesSaved };
}

/** What happened to one tool result of the context. */
export interface ResultFate {
  callId: string;
  name: string;
  fate: 'shown' | 'elided' | 'truncated';
  /** UTF-8 bytes of the recorded output as a tool message carries it (`outputText`), and of what is shown instead. */
  bytes: number;
  shownBytes: number;
  /** elided: the call whose identical output stays in the context. */
  sameAs?: string;
}

const defaultMaxKeys = 4096;

/** One text per output, so blocks with an image compare by their bytes too. */
function payload(output: ToolResult['output']): string {
  return typeof output === 'string' ? output : canonicalJson(output);
}

// Contexts of one session share most of their messages; each output is hashed once, not once per turn.
const digests = new WeakMap<ToolResult, string>();
function digest(result: ToolResult): string {
  let hash = digests.get(result);
  if (hash === undefined) {
    hash = createHash('sha256').update(payload(result.output)).digest('hex');
    digests.set(result, hash);
  }
  return hash;
}

/** Cuts text to at most `max` UTF-8 bytes without splitting a character. */
function cut(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  let end = max;
  // Step back over continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** The key of a call: tool name and canonical arguments, so key order does not matter. */
export function callKey(name: string, input: unknown): string {
  return `${name}\0${canonicalJson(input ?? {})}`;
}

/**
 * The state of one context, fed in the order the model sees it: calls, then their results. For each result it
 * decides what the model is shown, in this order:
 * 1. a result longer than `maxResultBytes` is cut to it, never elided, and ends the baseline of its tool and
 *    arguments (the model does not have that payload whole in front of it);
 * 2. so does an error, a synthetic result, or one the agent cleared or cut — shown as it is;
 * 3. a result of a read-only tool byte-identical to the baseline for the same tool and arguments is replaced by
 *    the marker, if the marker is shorter;
 * 4. any other read-only result becomes the baseline: a changed output is the new reference, and reverting to an
 *    older output is shown in full.
 */
export class Elider {
  private readonly calls = new Map<string, { name: string; key: string }>();
  private readonly baselines = new Map<string, { hash: string; callId: string }>();
  /** Keys whose latest result the model was shown as a marker (for counting re-asks). */
  private readonly elidedKeys = new Set<string>();
  private readonly maxKeys: number;

  constructor(private readonly options: ElideOptions) {
    this.maxKeys = options.maxKeys ?? defaultMaxKeys;
  }

  /** A compaction: the model no longer sees any earlier payload. */
  reset(): void {
    this.baselines.clear();
    this.elidedKeys.clear();
  }

  call(id: string, name: string, input: unknown): string {
    const key = callKey(name, input);
    this.calls.set(id, { name, key });
    return key;
  }

  /**
   * The agent cleared the output of this call from what the model sees (opencode's pruning): a baseline set by
   * it ends, since a marker must point at an output the model still has.
   */
  forgetCall(callId: string): void {
    for (const [key, baseline] of this.baselines) {
      if (baseline.callId === callId) this.baselines.delete(key);
    }
  }

  /** Whether the latest result for these arguments was shown as a marker: asking again is a re-ask. */
  elided(key: string): boolean {
    return this.elidedKeys.has(key);
  }

  /** What the model is shown for `result`, and its fate. `result` itself is never changed. */
  result(result: ToolResult): { shown: ToolResult; fate: ResultFate } {
    const call = this.calls.get(result.callId);
    const name = result.name ?? call?.name ?? '';
    // Sizes are of what the model is sent (`outputText`: an image is named, not inlined, in a tool message), so the
    // marker replaces only a longer text and a limit cuts only a longer one. Identity is of the whole output: two
    // different images with the same text around them are not the same result.
    const text = outputText(result.output);
    const bytes = Buffer.byteLength(text, 'utf8');
    const fate: ResultFate = { callId: result.callId, name, fate: 'shown', bytes, shownBytes: bytes };
    const key = call?.key;
    if (key !== undefined) {
      // Keep the key order least-recent first, and the map bounded.
      this.calls.delete(result.callId);
      this.elidedKeys.delete(key);
    }
    const forget = () => {
      if (key !== undefined) this.baselines.delete(key);
    };

    const max = this.options.maxResultBytes;
    if (max !== undefined && bytes > max) {
      forget();
      // The note is reserved at its longest, so what is shown never exceeds the limit.
      const kept = cut(text, Math.max(0, max - Buffer.byteLength(truncationNote(0, bytes))));
      const shown = kept + truncationNote(Buffer.byteLength(kept), bytes);
      fate.fate = 'truncated';
      fate.shownBytes = Buffer.byteLength(shown);
      return { shown: { ...result, output: shown }, fate };
    }
    if (
      result.isError ||
      result.synthetic ||
      key === undefined ||
      clearedOutputs.has(text) ||
      agentTruncation.some((pattern) => pattern.test(text))
    ) {
      forget();
      return { shown: result, fate };
    }
    if (!this.options.readOnly(name)) return { shown: result, fate };

    const hash = digest(result);
    const baseline = this.baselines.get(key);
    if (baseline?.hash === hash) {
      const marker = elisionMarker(baseline.callId);
      const markerBytes = Buffer.byteLength(marker);
      if (markerBytes >= bytes) return { shown: result, fate };
      fate.fate = 'elided';
      fate.shownBytes = markerBytes;
      fate.sameAs = baseline.callId;
      this.elidedKeys.add(key);
      if (this.elidedKeys.size > this.maxKeys)
        this.elidedKeys.delete(this.elidedKeys.values().next().value as string);
      return { shown: { ...result, output: marker }, fate };
    }
    this.baselines.delete(key);
    this.baselines.set(key, { hash, callId: result.callId });
    if (this.baselines.size > this.maxKeys)
      this.baselines.delete(this.baselines.keys().next().value as string);
    return { shown: result, fate };
  }
}

/**
 * A context as the model is shown it with repeats elided (see `Elider`), and the fate of every tool result in it.
 * A compaction in the context starts afresh. Messages that do not change are the same objects.
 */
export function elideRepeats(
  context: readonly Message[],
  options: ElideOptions,
): { messages: Message[]; fates: ResultFate[] } {
  return showThrough(new Elider(options), context);
}

/** Feeds messages through an elider that may already hold state (free mode's opening context). */
export function showThrough(
  elider: Elider,
  context: readonly Message[],
): { messages: Message[]; fates: ResultFate[] } {
  const fates: ResultFate[] = [];
  const messages: Message[] = [];
  for (const message of context) {
    if (message.compaction) elider.reset();
    let parts: Part[] | undefined;
    message.parts.forEach((part, index) => {
      if (part.type === 'tool_call') elider.call(part.id, part.name, part.input);
      else if (part.type === 'tool_result') {
        const { shown, fate } = elider.result(part);
        fates.push(fate);
        if (shown !== part) {
          parts ??= message.parts.slice();
          parts[index] = shown;
        }
      }
    });
    messages.push(parts ? { ...message, parts } : message);
  }
  return { messages, fates };
}
