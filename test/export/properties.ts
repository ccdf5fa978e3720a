// What every row of each format must satisfy, as lists of problems (empty = fine), so the same checks run over
// hand-built samples and over samples built from real sessions. Each takes the row and the sample it came from.
import type { Sample } from '../../src/export/sample.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const keysWithin = (v: Json, allowed: string[]) => Object.keys(v).filter((k) => !allowed.includes(k));

function parses(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** `{type:'function', function:{name, description, parameters}}` with parameters an object (or, for axolotl, its JSON). */
function toolProblems(tools: unknown, parametersAsString = false): string[] {
  if (!Array.isArray(tools)) return ['tools is not a list'];
  return tools.flatMap((t, i) => {
    const fn = isObject(t) ? t.function : undefined;
    if (!isObject(t) || t.type !== 'function' || !isObject(fn)) return [`tools[${i}] is not a function tool`];
    if (typeof fn.name !== 'string' || typeof fn.description !== 'string')
      return [`tools[${i}] lacks name/description`];
    if (parametersAsString && !parses(fn.parameters)) return [`tools[${i}].parameters is not JSON text`];
    const params = parametersAsString ? JSON.parse(fn.parameters as string) : fn.parameters;
    return isObject(params) && params.type === 'object'
      ? []
      : [`tools[${i}].parameters is not an object schema`];
  });
}

/**
 * The tool-call bookkeeping every messages list must keep: each tool message answers a call of an earlier assistant
 * message (once), every call before the last assistant message is answered, and the last message is an assistant.
 */
function callProblems(messages: Json[], callsOf: (m: Json) => Json[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  const answered = new Set<string>();
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      lastAssistant = i;
      for (const c of callsOf(m)) open.set(String(c.id), i);
    }
    if (m.role === 'tool') {
      const id = String(m.tool_call_id);
      if (!open.has(id)) problems.push(`message ${i}: tool_call_id ${id} answers no earlier call`);
      if (answered.has(id)) problems.push(`message ${i}: call ${id} answered twice`);
      answered.add(id);
    }
  });
  for (const [id, at] of open) {
    if (at < lastAssistant && !answered.has(id)) problems.push(`call ${id} is never answered`);
  }
  if (messages.at(-1)?.role !== 'assistant') problems.push('the last message is not an assistant message');
  return problems;
}

const toolCalls = (m: Json): Json[] => (Array.isArray(m.tool_calls) ? (m.tool_calls as Json[]) : []);

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The OpenAI chat fine-tuning schema, and `weight` = the sample's train flags. */
export function openaiProblems(row: unknown, sample: Sample): string[] {
  if (!isObject(row)) return ['row is not an object'];
  const problems = keysWithin(row, ['messages', 'tools', 'parallel_tool_calls']).map(
    (k) => `unknown key ${k}`,
  );
  if (row.tools !== undefined) problems.push(...toolProblems(row.tools));
  if (!Array.isArray(row.messages) || !row.messages.every(isObject))
    return [...problems, 'messages is not a list'];
  const messages = row.messages as Json[];
  const trainFlags = sample.messages.flatMap((m) => (m.role === 'assistant' ? [m.train] : []));
  let assistants = 0;
  messages.forEach((m, i) => {
    const at = `message ${i}`;
    if (m.role === 'system' || m.role === 'user') {
      problems.push(...keysWithin(m, ['role', 'content']).map((k) => `${at}: unknown key ${k}`));
      if (typeof m.content !== 'string') problems.push(`${at}: content is not a string`);
      if (m.role === 'system' && i !== 0) problems.push(`${at}: a system message after the first`);
    } else if (m.role === 'tool') {
      problems.push(
        ...keysWithin(m, ['role', 'content', 'tool_call_id']).map((k) => `${at}: unknown key ${k}`),
      );
      if (typeof m.content !== 'string' || typeof m.tool_call_id !== 'string')
        problems.push(`${at}: bad tool message`);
    } else if (m.role === 'assistant') {
      problems.push(
        ...keysWithin(m, ['role', 'content', 'tool_calls', 'weight']).map((k) => `${at}: unknown key ${k}`),
      );
      if (m.weight !== 0 && m.weight !== 1) problems.push(`${at}: weight is not 0 or 1`);
      if (m.weight !== (trainFlags[assistants] ? 1 : 0))
        problems.push(`${at}: weight differs from the train flag`);
      assistants++;
      const calls = toolCalls(m);
      if (m.content === undefined ? calls.length === 0 : typeof m.content !== 'string') {
        problems.push(`${at}: content missing without tool calls, or not a string`);
      }
      for (const c of calls) {
        const fn = c.function as Json | undefined;
        if (typeof c.id !== 'string' || c.type !== 'function' || typeof fn?.name !== 'string') {
          problems.push(`${at}: malformed tool call`);
        } else if (typeof fn.arguments !== 'string' || !isObject(parseOr(fn.arguments)))
          problems.push(`${at}: arguments of ${c.id} are not a JSON object in a string`);
      }
    } else problems.push(`${at}: role ${String(m.role)}`);
    if (m.role !== 'assistant' && 'weight' in m)
      problems.push(`${at}: weight on a ${String(m.role)} message`);
  });
  if (assistants === 0) problems.push('no assistant message');
  return [...problems, ...callProblems(messages, toolCalls)];
}

const odd = ['human', 'observation'];
const even = ['gpt', 'function_call'];

/** LLaMA-Factory's ShareGPT converter's checks, plus what its FunctionFormatter and ToolFormatter parse. */
export function sharegptProblems(row: unknown): string[] {
  if (!isObject(row)) return ['row is not an object'];
  const problems: string[] = [];
  if (typeof row.system !== 'string') problems.push('system is not a string');
  if (typeof row.tools !== 'string' || !parses(row.tools)) problems.push('tools is not a JSON string');
  else {
    const tools = JSON.parse(row.tools) as unknown;
    if (
      !Array.isArray(tools) ||
      !tools.every((t) => isObject(t) && typeof t.name === 'string' && isObject(t.parameters))
    )
      problems.push('tools is not a list of function objects');
  }
  const turns = row.conversations;
  if (!Array.isArray(turns) || turns.length === 0) return [...problems, 'no conversations'];
  turns.forEach((t: Json, i) => {
    const allowed = i % 2 === 0 ? odd : even;
    if (!allowed.includes(String(t.from)))
      problems.push(`turn ${i}: ${String(t.from)} where ${allowed.join('/')} belongs`);
    if (typeof t.value !== 'string') problems.push(`turn ${i}: value is not a string`);
    if (t.from === 'function_call') {
      const value = parses(t.value) ? (JSON.parse(t.value as string) as unknown) : undefined;
      const calls = Array.isArray(value) ? value : [value];
      const ok =
        calls.length > 0 &&
        calls.every((c) => isObject(c) && typeof c.name === 'string' && isObject(c.arguments));
      if (!ok) problems.push(`turn ${i}: function_call is not {name, arguments: object} or a list of them`);
    }
  });
  if (turns.length % 2 !== 0) problems.push('odd number of turns');
  return problems;
}

/** TRL conversational rows: arguments are objects, tool messages name their tool and call. */
export function trlProblems(row: unknown): string[] {
  if (!isObject(row)) return ['row is not an object'];
  const problems = toolProblems(row.tools);
  let messages: Json[];
  if ('messages' in row) {
    problems.push(...keysWithin(row, ['messages', 'tools']).map((k) => `unknown key ${k}`));
    messages = row.messages as Json[];
  } else {
    problems.push(...keysWithin(row, ['prompt', 'completion', 'tools']).map((k) => `unknown key ${k}`));
    const completion = row.completion as Json[];
    if (!Array.isArray(row.prompt) || row.prompt.length === 0) problems.push('empty prompt');
    if (
      !Array.isArray(completion) ||
      completion.length === 0 ||
      !completion.every((m) => m.role === 'assistant')
    )
      problems.push('completion is not a list of assistant messages');
    messages = [...(row.prompt as Json[]), ...completion];
  }
  problems.push(...messageProblems(messages));
  return [...problems, ...callProblems(messages, toolCalls)];
}

function messageProblems(messages: Json[]): string[] {
  return messages.flatMap((m, i) => {
    const problems: string[] = [];
    if (!['system', 'user', 'assistant', 'tool'].includes(String(m.role)))
      problems.push(`message ${i}: role`);
    if (typeof m.content !== 'string') problems.push(`message ${i}: content is not a string`);
    if (m.role === 'tool' && (typeof m.name !== 'string' || typeof m.tool_call_id !== 'string'))
      problems.push(`message ${i}: tool message without name and tool_call_id`);
    for (const c of toolCalls(m)) {
      if (!isObject((c.function as Json | undefined)?.arguments))
        problems.push(`message ${i}: arguments not an object`);
    }
    return problems;
  });
}

/** axolotl chat_template rows: `train` on every message, arguments and parameters as JSON text axolotl parses. */
export function axolotlProblems(row: unknown, sample: Sample): string[] {
  if (!isObject(row)) return ['row is not an object'];
  const problems = [
    ...keysWithin(row, ['messages', 'tools']).map((k) => `unknown key ${k}`),
    ...toolProblems(row.tools, true),
  ];
  if (!Array.isArray(row.messages)) return [...problems, 'messages is not a list'];
  const messages = row.messages as Json[];
  messages.forEach((m, i) => {
    const source = sample.messages[i];
    if (typeof m.train !== 'boolean') problems.push(`message ${i}: no train flag`);
    else if (m.train !== (source?.role === 'assistant' && source.train))
      problems.push(`message ${i}: train differs`);
    for (const c of toolCalls(m)) {
      const args = (c.function as Json | undefined)?.arguments;
      if (!parses(args) || !isObject(JSON.parse(args as string)))
        problems.push(`message ${i}: arguments not JSON text`);
    }
  });
  return [...problems, ...callProblems(messages, toolCalls)];
}

/** TRL preference rows: a prompt, one assistant message each side, and the two differ. */
export function dpoProblems(row: unknown): string[] {
  if (!isObject(row)) return ['row is not an object'];
  const problems = [
    ...keysWithin(row, ['prompt', 'chosen', 'rejected', 'tools']).map((k) => `unknown key ${k}`),
    ...toolProblems(row.tools),
  ];
  if (!Array.isArray(row.prompt) || row.prompt.length === 0) problems.push('empty prompt');
  else problems.push(...messageProblems(row.prompt as Json[]));
  for (const side of ['chosen', 'rejected'] as const) {
    const turn = row[side];
    if (!Array.isArray(turn) || turn.length !== 1 || (turn[0] as Json).role !== 'assistant')
      problems.push(`${side} is not one assistant message`);
    else problems.push(...messageProblems(turn as Json[]).map((p) => `${side}: ${p}`));
  }
  if (JSON.stringify(row.chosen) === JSON.stringify(row.rejected)) problems.push('chosen equals rejected');
  return problems;
}
