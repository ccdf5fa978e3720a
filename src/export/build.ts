// Samples from stored sessions (the original turns) and from replay runs (pairs.jsonl). Pure apart from what it
// is handed: the caller loads sessions and reads pairs.
import { isHarnessText, type TurnRequest } from '../model/request.js';
import { type Message, outputText, type Part, type Session, type ToolCall } from '../model/session.js';
import { type Turn, turns } from '../model/turns.js';
import { sharedToolsFor } from '../replay/catalogue/index.js';
import type { ToolSpec } from '../replay/catalogue/types.js';
import { type ChatMessage, chatText } from '../replay/chat.js';
import { hasShape } from '../replay/context.js';
import { type ElideOptions, elideRepeats, type ResultFate } from '../replay/elide.js';
import type { Pair } from '../replay/pairs.js';
import { specsOf } from '../replay/wire.js';
import type {
  AssistantMessage,
  Sample,
  SampleCall,
  SampleMessage,
  SampleTool,
  ToolMessage,
  Unit,
} from './sample.js';

export type TrainOn = 'replayed' | 'all-assistant' | 'last';

export interface BuildOptions {
  unit: Unit;
  trainOn: TrainOn;
  /** Keep text the harness wrote into the user's turn (reminders, IDE context, hook output). */
  includeInjected: boolean;
  /** --elide-repeats / --max-result-bytes, applied to every context as a replay would. */
  shown?: ElideOptions;
}

/** A sample, or why a session or turn gave none; `fates` are the elision outcomes of the sample's results. */
export type Built = { sample: Sample; fates: ResultFate[]; notes: string[] } | { skip: string };

function text(parts: readonly Part[]): string {
  return parts
    .filter((part): part is Extract<Part, { type: 'text' }> => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

function callOf(call: ToolCall): SampleCall {
  const input = call.input as { raw?: unknown } | null;
  if (input && typeof input === 'object' && Object.keys(input).length === 1 && typeof input.raw === 'string')
    return { id: call.id, name: call.name, arguments: {}, raw: input.raw };
  if (input === null || input === undefined) return { id: call.id, name: call.name, arguments: {} };
  if (typeof input !== 'object' || Array.isArray(input))
    return { id: call.id, name: call.name, arguments: {}, raw: JSON.stringify(input) };
  return { id: call.id, name: call.name, arguments: input };
}

/**
 * Messages of the model in sample form. Injected user text is left out unless asked for; a tool result whose
 * call is not in the sample (cut off by a compaction) is left out too: no trainer takes an answer to nothing.
 */
function sampleMessages(
  messages: readonly Message[],
  includeInjected: boolean,
  notes: string[],
): SampleMessage[] {
  const out: SampleMessage[] = [];
  const calls = new Map<string, string>();
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        // Harness text an agent logged as an attachment (Claude Code's environment, date, … system messages) is
        // injected text like the reminders; a recorded system prompt is not.
        if (message.attachment !== undefined && !includeInjected) break;
        out.push({ role: 'system', content: text(message.parts) });
        break;
      case 'user': {
        // A compaction summary is what the model had instead of the history: always kept. Harness context that
        // replaces its earlier copy (Gemini CLI's session context on a resume) is an attachment, injected text.
        const summary = message.compaction && message.attachment === undefined;
        if (message.injected && !includeInjected && !summary) break;
        const content = text(message.parts);
        if (message.parts.some((part) => part.type === 'image'))
          notes.push('image in a user message left out');
        if (content !== '') out.push({ role: 'user', content });
        break;
      }
      case 'assistant': {
        const own = message.parts.filter((part): part is ToolCall => part.type === 'tool_call').map(callOf);
        for (const call of own) calls.set(call.id, call.name);
        const reasoning = message.parts
          .filter(
            (part): part is Extract<Part, { type: 'reasoning' }> =>
              part.type === 'reasoning' && !part.redacted,
          )
          .map((part) => part.text)
          .join('\n');
        out.push({
          role: 'assistant',
          content: text(message.parts),
          ...(reasoning ? { reasoning } : {}),
          calls: own,
          train: false,
        });
        break;
      }
      case 'tool':
        for (const part of message.parts) {
          if (part.type !== 'tool_result') continue;
          const name = calls.get(part.callId);
          if (name === undefined) {
            notes.push('a tool result whose call is not in the sample left out');
            continue;
          }
          out.push({
            role: 'tool',
            callId: part.callId,
            name,
            content: outputText(part.output),
            isError: part.isError,
          });
        }
        if (includeInjected || !message.injected) {
          const extra = text(message.parts);
          if (extra) out.push({ role: 'user', content: extra });
        }
        break;
    }
  }
  return out;
}

/**
 * One system message, first: trainers take a system prompt at the start only (OpenAI's and LLaMA-Factory's checks
 * refuse one later), while agents send instructions in several (Codex's developer messages: permissions, skills,
 * collaboration mode, some after the environment context). Their texts are joined, in order, into the first.
 */
export function oneSystem(messages: SampleMessage[]): SampleMessage[] {
  const systems = messages.filter((message) => message.role === 'system');
  if (systems.length === 0 || (systems.length === 1 && messages[0]?.role === 'system')) return messages;
  return [
    { role: 'system', content: systems.map((message) => message.content).join('\n\n') },
    ...messages.filter((message) => message.role !== 'system'),
  ];
}

/**
 * The tools the model was offered at a turn whose request the agent recorded (Claude Code 2.1.3xx records each
 * request's tool list: 10 tools where our catalogue has 49), as sample tools; undefined without a record.
 */
function recordedTools(request: TurnRequest | undefined): SampleTool[] | undefined {
  return hasShape(request) ? sampleTools(specsOf(request.tools)) : undefined;
}

function toolsOf(session: Session): SampleTool[] {
  return sampleTools(sharedToolsFor(session));
}

function sampleTools(specs: readonly ToolSpec[]): SampleTool[] {
  return specs.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Record<string, unknown>,
  }));
}

/** The sample's assistant messages from index `from` on are the ones trained (all, or only the last). */
function markTraining(messages: SampleMessage[], from: number, trainOn: TrainOn): void {
  let last = -1;
  messages.forEach((message, index) => {
    if (message.role === 'assistant') last = index;
  });
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    message.train = trainOn === 'last' ? index === last : index >= from;
  });
}

/** A turn's context and answer as one sample (context as shown: elided and cut where asked). */
function fromTurn(
  session: Session,
  turn: Turn,
  options: BuildOptions,
  tools: SampleTool[],
  id: string,
  trainFrom: (messages: readonly Message[]) => number,
): Built {
  const notes: string[] = [];
  const { messages: context, fates } = options.shown
    ? elideRepeats(turn.context, options.shown)
    : { messages: turn.context, fates: [] as ResultFate[] };
  const all = [...context, turn.response];
  const messages = sampleMessages(all, options.includeInjected, notes);
  const start = trainFrom(all);
  // Where the training starts, in sample positions: the first sample message made from `all[start]` or later.
  const kept = sampleMessages(all.slice(0, start), options.includeInjected, []).length;
  markTraining(messages, kept, options.trainOn);
  if (!messages.some((m) => m.role === 'assistant' && m.train))
    return { skip: 'nothing to train on in the sample' };
  return {
    sample: {
      id,
      session: session.id,
      agent: session.agent,
      unit: options.unit,
      messages: oneSystem(messages),
      tools,
    },
    fates,
    notes,
  };
}

/**
 * Samples from a stored session's original turns. `own` is where its own messages start (inherited history is
 * context, never a sample of its own). Units: a model turn (its context and answer); a user turn (the last model
 * turn before the next real user message, trained from that user message on); a session (the last turn before
 * each compaction, and the last one: what the model saw whole).
 */
export function* fromSession(
  session: Session,
  own: number,
  options: BuildOptions,
  requests?: ReadonlyMap<string, TurnRequest>,
): Generator<Built> {
  if (options.trainOn === 'replayed')
    throw new Error('--train-on replayed needs a replay run (--from run:ID)');
  let catalogued: SampleTool[] | undefined;
  // A turn's tools: the list its recorded request offered, else the catalogue's for the session.
  const toolsAt = (turn: Turn) => {
    const nativeId = turn.response.nativeId;
    const recorded = recordedTools(nativeId !== undefined ? requests?.get(nativeId) : undefined);
    if (recorded) return recorded;
    catalogued ??= toolsOf(session);
    return catalogued;
  };
  let previous: Turn | undefined;
  let count = 0;
  const isRealUser = (message: Message) =>
    message.role === 'user' && !message.injected && !message.compaction;
  /** The last real user message in a context, by identity. */
  const lastUser = (turn: Turn) => {
    for (let i = turn.context.length - 1; i >= 0; i--)
      if (isRealUser(turn.context[i] as Message)) return turn.context[i];
    return undefined;
  };
  const trainFrom = (turn: Turn) => (all: readonly Message[]) => {
    if (options.trainOn === 'last') return all.length - 1;
    if (options.unit !== 'user-turn') return 0;
    const user = lastUser(turn);
    const at = user ? all.indexOf(user) : -1;
    return at === -1 ? 0 : at;
  };
  const emit = (turn: Turn) => {
    count++;
    return fromTurn(
      session,
      turn,
      options,
      toolsAt(turn),
      `${session.id}:${options.unit}:${turn.index + 1}`,
      trainFrom(turn),
    );
  };

  for (const turn of turns(session.messages, own)) {
    if (options.unit === 'model-turn') {
      yield emit(turn);
      continue;
    }
    if (previous) {
      const segmentEnded =
        turn.context[0] !== previous.context[0] || turn.context.length <= previous.context.length;
      const userChanged = options.unit === 'user-turn' && lastUser(turn) !== lastUser(previous);
      if (segmentEnded || userChanged) yield emit(previous);
    }
    previous = turn;
  }
  if (previous && options.unit !== 'model-turn') yield emit(previous);
  if (count === 0) yield { skip: 'no assistant turns' };
}

// ---------------------------------------------------------------------------------------------------------------
// Replay runs: pairs.jsonl lines, in chat form.

/** Arguments are an object; anything else (not JSON, or JSON that is not an object) is kept raw. */
function parseCall(call: { id: string; function: { name: string; arguments: string } }): SampleCall {
  const raw = { id: call.id, name: call.function.name, arguments: {}, raw: call.function.arguments };
  try {
    const parsed: unknown = JSON.parse(call.function.arguments);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return raw;
    return { id: call.id, name: call.function.name, arguments: parsed };
  } catch {
    return raw;
  }
}

export function assistantOf(
  message: Extract<ChatMessage, { role: 'assistant' }>,
  train: boolean,
): AssistantMessage {
  return {
    role: 'assistant',
    content: message.content ?? '',
    ...(message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
    calls: (message.tool_calls ?? []).map(parseCall),
    train,
  };
}

/**
 * Chat messages in sample form; tool results that answer no call in them are left out. `errors`: the call ids
 * whose result was an error (a v2 pair's `tool_errors`; chat form itself cannot say). Text the harness wrote into
 * a user message (a reminder, "[Request interrupted by user…]") is left out unless `includeInjected`, as the
 * samples from stored sessions leave it out: every format gets the same cleaning, from pairs or from sessions.
 */
export function fromChat(
  messages: readonly ChatMessage[],
  notes: string[],
  errors: ReadonlySet<string> = new Set(),
  includeInjected = false,
): SampleMessage[] {
  const out: SampleMessage[] = [];
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      const assistant = assistantOf(message, false);
      for (const call of assistant.calls) names.set(call.id, call.name);
      out.push(assistant);
    } else if (message.role === 'tool') {
      const name = names.get(message.tool_call_id);
      if (name === undefined) {
        notes.push('a tool result whose call is not in the sample left out');
        continue;
      }
      const tool: ToolMessage = {
        role: 'tool',
        callId: message.tool_call_id,
        name,
        content: message.content,
        isError: errors.has(message.tool_call_id),
      };
      out.push(tool);
    } else if (message.role === 'system') out.push({ role: 'system', content: message.content });
    else {
      const content =
        includeInjected || typeof message.content === 'string'
          ? chatText(message.content)
          : chatText(message.content.filter((part) => part.type !== 'text' || !isHarnessText(part.text)));
      if (content !== '' && (includeInjected || !isHarnessText(content))) out.push({ role: 'user', content });
    }
  }
  return out;
}

function toolsFromPair(pair: Pair): SampleTool[] {
  return pair.tools.map((tool) => ({
    name: tool.function.name,
    description: tool.function.description,
    parameters: tool.function.parameters,
  }));
}

/** The calls and text of two answers, compared as a trainer would see them. */
export function sameAnswer(
  a: Extract<ChatMessage, { role: 'assistant' }>,
  b: Extract<ChatMessage, { role: 'assistant' }>,
): boolean {
  const key = (m: Extract<ChatMessage, { role: 'assistant' }>) =>
    JSON.stringify([
      (m.content ?? '').trim(),
      (m.tool_calls ?? []).map((call) => [call.function.name, parseCall(call).arguments]),
    ]);
  return key(a) === key(b);
}

/**
 * A sample from one pair: the context it was asked with and the model's answer. `openingLength` (free mode, session
 * unit) is how many messages of the context came from the recording rather than from the model: assistant messages
 * after it are the model's own and count as replayed.
 */
export function fromPair(pair: Pair, options: BuildOptions, openingLength = pair.messages.length): Built {
  const notes: string[] = [];
  if (options.unit === 'model-turn' && options.trainOn === 'replayed') openingLength = pair.messages.length;
  const errors = new Set(pair.tool_errors ?? []);
  const context = fromChat(pair.messages, notes, errors, options.includeInjected);
  const opening = fromChat(pair.messages.slice(0, openingLength), [], errors, options.includeInjected).length;
  const messages = [...context, assistantOf(pair.completion, false)];
  if (options.trainOn === 'last') markTraining(messages, messages.length - 1, 'last');
  else if (options.trainOn === 'all-assistant') markTraining(messages, 0, 'all-assistant');
  else markTraining(messages, opening, 'replayed');
  return {
    sample: {
      id: `${pair.session}:${options.unit}:${pair.turn}:${pair.run}`,
      session: pair.session,
      agent: pair.agent as Sample['agent'],
      unit: options.unit,
      messages: oneSystem(messages),
      tools: toolsFromPair(pair),
    },
    fates: [],
    notes,
  };
}

/**
 * A preference prompt without a system prompt of ours: where the replay gave the model our catalogue's prompt (the
 * recording had none), the original answer — the chosen one — was made without it, so the pair's shared prompt
 * must not hold it. A recorded or agent's own system prompt stays.
 */
function ownPrompt(pair: Pair): readonly ChatMessage[] {
  if (pair.sources?.system !== 'catalogue') return pair.messages;
  return pair.messages.filter((message) => message.role !== 'system');
}

/** A preference pair: prompt = the context, chosen = the original answer, rejected = the replayed one. */
export function preferenceFromPair(pair: Pair, includeInjected = false): Built {
  if (!pair.original) return { skip: 'no original turn to prefer' };
  if (sameAnswer(pair.original, pair.completion)) return { skip: 'replayed turn equals the original' };
  const notes: string[] = [];
  return {
    sample: {
      id: `${pair.session}:model-turn:${pair.turn}:${pair.run}`,
      session: pair.session,
      agent: pair.agent as Sample['agent'],
      unit: 'model-turn',
      messages: oneSystem(fromChat(ownPrompt(pair), notes, new Set(pair.tool_errors ?? []), includeInjected)),
      tools: toolsFromPair(pair),
      preference: { chosen: assistantOf(pair.original, true), rejected: assistantOf(pair.completion, true) },
    },
    fates: [],
    notes,
  };
}
