// The tools a replay offers the model: each agent's built-in catalogue (one file per agent), plus schemas inferred
// from the recorded arguments for tools a session called that the catalogue lacks (MCP tools, renamed tools).
// Every call is answered from the recording, so nothing here runs a tool. Pure code, no I/O.

import { type AgentId, type Session, toolCalls } from '../../model/session.js';
import { claudeCodeSystemPrompt, claudeCodeTools } from './claude-code.js';
import { codexSystemPrompt, codexTools } from './codex.js';
import { codex0169Tools } from './codex-0.169.js';
import { dockerAgentSystemPrompt, dockerAgentTools } from './docker-agent.js';
import { geminiSystemPrompt, geminiTools } from './gemini.js';
import { hiddenOpencodeTools, opencodeSystemPrompt, opencodeTools } from './opencode.js';
import { qwenSystemPrompt, qwenTools } from './qwen.js';
import { deepFreeze, object } from './schema.js';
import type { Catalogue, JsonSchema, ToolSpec } from './types.js';

export type { Catalogue, JsonSchema, ToolSpec } from './types.js';

const catalogues: Readonly<Record<AgentId, Catalogue>> = deepFreeze({
  'claude-code': { agent: 'claude-code', tools: claudeCodeTools, systemPrompt: claudeCodeSystemPrompt },
  opencode: { agent: 'opencode', tools: opencodeTools, systemPrompt: opencodeSystemPrompt },
  codex: { agent: 'codex', tools: codexTools, systemPrompt: codexSystemPrompt },
  'docker-agent': { agent: 'docker-agent', tools: dockerAgentTools, systemPrompt: dockerAgentSystemPrompt },
  gemini: { agent: 'gemini', tools: geminiTools, systemPrompt: geminiSystemPrompt },
  qwen: { agent: 'qwen', tools: qwenTools, systemPrompt: qwenSystemPrompt },
});

const byName = new Map<string, ReadonlyMap<string, ToolSpec>>(
  Object.values(catalogues).map((entry) => [
    entry.agent,
    new Map(entry.tools.map((spec) => [spec.name, spec])),
  ]),
);

/** Tools an agent records but never offers the model, so replay must not offer them either. */
const hidden = new Map<string, ReadonlySet<string>>([['opencode', new Set(hiddenOpencodeTools)]]);

/** The agent's built-in tools and default system prompt. The result is frozen: it is shared by every caller. */
export function catalogue(agent: AgentId): Catalogue {
  const found = catalogues[agent] as Catalogue | undefined;
  // A session read back from a store may name an agent this build does not know.
  if (found === undefined) throw new Error(`no tool catalogue for agent "${String(agent)}"`);
  return found;
}

/**
 * The arguments of a tool that have a default (from the catalogue's schemas): matching treats a call giving
 * an argument at its default like one leaving it out.
 */
export function toolDefaults(agent: AgentId, toolName: string): Record<string, unknown> | undefined {
  const spec = catalogue(agent).tools.find((tool) => tool.name === toolName);
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(spec?.parameters.properties ?? {})) {
    if ('default' in property) out[key] = property.default;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Arguments of a tool that only describe the call (the shell `description` of Claude Code, opencode, Gemini CLI and Qwen Code): a call
 * without them, or with other words, does the same.
 */
export function toolCommentary(agent: AgentId, toolName: string): readonly string[] | undefined {
  return commentary[agent]?.[toolName];
}

const commentary: Partial<Record<AgentId, Record<string, readonly string[]>>> = {
  'claude-code': { Bash: ['description'] },
  opencode: { bash: ['description'] },
  gemini: { run_shell_command: ['description'] },
  qwen: { run_shell_command: ['description'] },
};

/**
 * Is this tool read-only for this agent? Only our catalogue decides (an allow-list); unknown/MCP tools are not
 * read-only whatever they claim.
 */
export function isReadOnly(agent: AgentId, toolName: string): boolean {
  return byName.get(agent)?.get(toolName)?.readOnly === true;
}

/**
 * A name a model can be offered. Recorded names that are not (empty, or redacted by whoever published the log, such
 * as "[REDACTED_NAME len=41 sha=…]") are left out: no model could call them, and a provider may refuse the whole
 * request over one bad tool name.
 */
export function isOfferableName(name: string): boolean {
  return /^[A-Za-z0-9_.:-]+$/.test(name);
}

/** Lists of the tools an agent's version itself offered, taken from its real requests, newest first. */
const versionLists: readonly {
  agent: AgentId;
  since: readonly number[];
  name: string;
  tools: readonly ToolSpec[];
}[] = deepFreeze([{ agent: 'codex', since: [0, 169], name: 'codex/0.169', tools: codex0169Tools }]);

/** `0.169.0-alpha.1` → [0, 169, 0]; undefined when it does not start with a number. */
function versionOf(text: string | undefined): number[] | undefined {
  const match = /^v?(\d+(?:\.\d+)*)/.exec(text ?? '');
  return match ? (match[1] as string).split('.').map(Number) : undefined;
}

function atLeast(version: readonly number[], since: readonly number[]): boolean {
  for (let i = 0; i < since.length; i++) {
    const have = version[i] ?? 0;
    const want = since[i] as number;
    if (have !== want) return have > want;
  }
  return true;
}

/**
 * Which tool list a replay of the session offers: what its agent's version offered where that is known
 * (`codex/0.169`: Codex CLI 0.169 and later, from its requests), else the agent's catalogue
 * (`replay-history/<agent>`, written here). Pairs name it (`sources.tool_list`).
 */
export function toolListOf(session: Pick<Session, 'agent' | 'version'>): {
  name: string;
  tools: readonly ToolSpec[];
} {
  const version = versionOf(session.version);
  const list = version
    ? versionLists.find((entry) => entry.agent === session.agent && atLeast(version, entry.since))
    : undefined;
  return list ?? { name: `replay-history/${session.agent}`, tools: catalogue(session.agent).tools };
}

/**
 * The tools to offer when replaying this session: its tool list (`toolListOf`), plus, for every tool the session
 * called that the list lacks, the catalogue's spec where it has one (a versioned list leaves out tools offered
 * later, such as Codex's deferred multi-agent tools) or a schema inferred from the recorded arguments (MCP
 * tools, renamed tools). Deterministic order: the list's own order, then the added tools by name. The specs are
 * copies, so the caller may change them.
 */
export function toolsFor(session: Session): ToolSpec[] {
  return offered(session, true) as ToolSpec[];
}

/**
 * `toolsFor` without copying the specs of the tool list and the catalogue: shared (and frozen), for callers that
 * only read them (export builds every sample's tools from them: copying cost it 3% of its time). A session
 * that called nothing outside its tool list gets the list itself, the same array for every such session, so
 * what is made of it once per list (a replay's chat tools and their bytes, `perList`) is made once per run.
 */
export function sharedToolsFor(session: Session): readonly ToolSpec[] {
  return offered(session, false);
}

function offered(session: Session, copy: boolean): readonly ToolSpec[] {
  const list = toolListOf(session);
  const listed = new Set(list.tools.map((spec) => spec.name));
  const catalogued = byName.get(session.agent);
  const skipped = hidden.get(session.agent);
  const recorded = new Map<string, unknown[]>();
  const fromCatalogue = new Map<string, ToolSpec>();
  for (const message of session.messages) {
    for (const call of toolCalls(message)) {
      if (listed.has(call.name) || skipped?.has(call.name) || !isOfferableName(call.name)) continue;
      const spec = catalogued?.get(call.name);
      if (spec) {
        fromCatalogue.set(call.name, spec);
        continue;
      }
      const inputs = recorded.get(call.name);
      if (inputs === undefined) recorded.set(call.name, [call.input]);
      else inputs.push(call.input);
    }
  }
  const inferred = [...recorded.entries()]
    .sort(([left], [right]) => compareNames(left, right))
    .map(
      ([name, inputs]): ToolSpec => ({
        name,
        description: inferredDescription(name, inputs.length),
        parameters: inferSchema(inputs),
        readOnly: false,
        inferred: true,
      }),
    );
  const added = [...fromCatalogue.entries()]
    .sort(([left], [right]) => compareNames(left, right))
    .map(([, spec]) => spec);
  // the lists and the catalogue are frozen (deepFreeze above): shared specs cannot be changed by a caller
  if (!copy)
    return added.length === 0 && inferred.length === 0 ? list.tools : [...list.tools, ...added, ...inferred];
  return copies(list.tools)
    .concat(added.map((spec) => structuredClone(spec)))
    .concat(inferred);
}

const listJson = new WeakMap<readonly ToolSpec[], string>();

/**
 * Fresh copies of a list's specs, parsed from its JSON made once: a third of what `structuredClone` of each spec
 * costs, paid for every session replayed or exported. The specs are plain JSON data (deep-equal either way).
 */
function copies(tools: readonly ToolSpec[]): ToolSpec[] {
  let json = listJson.get(tools);
  if (json === undefined) {
    json = JSON.stringify(tools);
    listJson.set(tools, json);
  }
  return JSON.parse(json) as ToolSpec[];
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
function compareNames(left: string, right: string): number {
  if (left < right) return -1;
  return left > right ? 1 : 0;
}

function inferredDescription(name: string, calls: number): string {
  const times = calls === 1 ? 'one recorded call' : `${calls} recorded calls`;
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  const what = mcp ? `The "${mcp[2]}" tool of the MCP server "${mcp[1]}".` : 'A tool the original agent had.';
  return `${what} Its parameters are inferred from ${times}.`;
}

// ---------------------------------------------------------------------------------------------------------------
// Schema inference

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'null';

/** The order types are listed in a union, so the same inputs always give the same schema. */
const kindOrder: readonly Kind[] = ['string', 'integer', 'number', 'boolean', 'array', 'object', 'null'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): Kind | undefined {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      // undefined, functions, bigints, symbols: not JSON, so not an argument a model could send.
      return undefined;
  }
}

/**
 * Infer an object JSON schema from recorded inputs: property types (unions where they differ, arrays' item types,
 * nested objects), required = keys present in every call. Inputs that are not objects (a free-form tool's raw text)
 * add no properties; with no object inputs the result is the empty object schema.
 */
export function inferSchema(inputs: readonly unknown[]): JsonSchema {
  return inferObject(inputs.filter(isPlainObject));
}

function inferObject(objects: readonly Record<string, unknown>[]): JsonSchema {
  const valuesByKey = new Map<string, unknown[]>();
  for (const entry of objects) {
    for (const [key, value] of Object.entries(entry)) {
      if (value === undefined) continue;
      const values = valuesByKey.get(key);
      if (values === undefined) valuesByKey.set(key, [value]);
      else values.push(value);
    }
  }
  // fromEntries defines own properties, so a recorded "__proto__" key stays a property instead of a prototype.
  const properties = Object.fromEntries([...valuesByKey].map(([key, values]) => [key, inferValue(values)]));
  const required = [...valuesByKey]
    .filter(([, values]) => values.length === objects.length)
    .map(([key]) => key);
  return object(properties, required);
}

function inferValue(values: readonly unknown[]): JsonSchema {
  const kinds = new Set<Kind>();
  const arrays: unknown[][] = [];
  const objects: Record<string, unknown>[] = [];
  for (const value of values) {
    const kind = kindOf(value);
    if (kind === undefined) continue;
    kinds.add(kind);
    if (Array.isArray(value)) arrays.push(value);
    else if (isPlainObject(value)) objects.push(value);
  }
  // Every integer is a number: 1 and 1.5 together are numbers, not a union of the two.
  if (kinds.has('number')) kinds.delete('integer');
  const types = kindOrder.filter((kind) => kinds.has(kind));
  const schema: JsonSchema = {};
  const [only] = types;
  if (types.length === 1 && only !== undefined) schema.type = only;
  else if (types.length > 1) schema.type = types;
  // An array seen only empty still gets `items` (any value): several providers reject an array schema without it.
  if (arrays.length > 0) schema.items = inferValue(arrays.flat());
  if (objects.length > 0) {
    const nested = inferObject(objects);
    schema.properties = nested.properties ?? {};
    if (nested.required !== undefined) schema.required = nested.required;
  }
  return schema;
}
