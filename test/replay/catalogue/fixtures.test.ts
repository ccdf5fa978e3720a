// The catalogue checked against the tool calls of real sessions: every tool name called in test/fixtures/real/<agent>/
// and sample-sessions/<agent>/ must be in the agent's catalogue with all its recorded argument keys declared (at
// every depth where the schema lists properties) and every required parameter present, unless it is an MCP tool
// (`mcp__…`), a name the publisher redacted, or a tool the agent never offers the model. Any other mismatch is a
// catalogue bug. The calls are read from the raw files by the small extraction below, not by the project's
// source adapters.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type AgentId, agents } from '../../../src/model/session.js';
import { catalogue, isOfferableName } from '../../../src/replay/catalogue/index.js';
import { undeclaredKeys } from './schema-check.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const real = join(root, 'test', 'fixtures', 'real');
const samples = join(root, 'sample-sessions');

interface Recorded {
  name: string;
  /** The arguments when the file shows them as a JSON object; undefined for raw text or redacted arguments. */
  input: Record<string, unknown> | undefined;
  where: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function jsonLines(file: string): { line: number; value: unknown }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, index) => {
      if (text.trim() === '') return [];
      try {
        return [{ line: index + 1, value: JSON.parse(text) as unknown }];
      } catch {
        return [];
      }
    });
}

/** Every object inside a JSON value, depth first. */
function* objectsIn(value: unknown): Generator<Record<string, unknown>> {
  if (Array.isArray(value)) for (const inner of value) yield* objectsIn(inner);
  else if (isPlainObject(value)) {
    yield value;
    for (const inner of Object.values(value)) yield* objectsIn(inner);
  }
}

/** Claude Code: `tool_use` blocks anywhere in a line (sub-agent progress lines mirror them too). */
function claudeCodeCalls(file: string): Recorded[] {
  if (!file.endsWith('.jsonl')) return [];
  return jsonLines(file).flatMap(({ line, value }) =>
    [...objectsIn(value)]
      .filter((block) => block.type === 'tool_use' && typeof block.name === 'string')
      .map((block) => ({
        name: String(block.name),
        input: isPlainObject(block.input) ? block.input : undefined,
        where: `${file}:${line}`,
      })),
  );
}

/** Codex: the call items of a rollout, in the envelope of current files or bare as older files write them. */
function codexCalls(file: string): Recorded[] {
  if (!file.endsWith('.jsonl')) return [];
  return jsonLines(file).flatMap(({ line, value }): Recorded[] => {
    if (!isPlainObject(value)) return [];
    const item = value.type === 'response_item' ? value.payload : value;
    if (!isPlainObject(item)) return [];
    const where = `${file}:${line}`;
    switch (item.type) {
      case 'function_call': {
        let input: unknown;
        try {
          input = JSON.parse(String(item.arguments));
        } catch {
          input = undefined; // redacted by the publisher, or not JSON
        }
        return [{ name: String(item.name), input: isPlainObject(input) ? input : undefined, where }];
      }
      case 'custom_tool_call':
        return [{ name: String(item.name), input: undefined, where }];
      case 'local_shell_call':
        return [{ name: 'local_shell', input: isPlainObject(item.action) ? item.action : undefined, where }];
      case 'web_search_call':
        return [{ name: 'web_search', input: isPlainObject(item.action) ? item.action : undefined, where }];
      default:
        return [];
    }
  });
}

/** opencode: tool parts, in exported/API JSON or in the `part` table of an opencode.db. */
function opencodeCalls(file: string): Recorded[] {
  const toolParts = (value: unknown, where: string): Recorded[] =>
    [...objectsIn(value)]
      .filter((part) => part.type === 'tool' && typeof part.tool === 'string')
      .map((part) => {
        const state = isPlainObject(part.state) ? part.state : {};
        // A pending part has not received its arguments yet: nothing to compare.
        const input = isPlainObject(state.input) && state.status !== 'pending' ? state.input : undefined;
        return { name: String(part.tool), input, where };
      });
  if (file.endsWith('.json')) return toolParts(JSON.parse(readFileSync(file, 'utf8')), file);
  if (!file.endsWith('.db')) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, data FROM part').all() as { id: string; data: string }[];
    return rows.flatMap((row) => toolParts(JSON.parse(row.data), `${file} part ${row.id}`));
  } finally {
    db.close();
  }
}

/** How to read each agent's files, and the folders holding its recorded calls (all in the repository, so a
 * missing folder is an error, not a reason to check less). docker-agent has no recorded files to read yet. */
const recordings: Partial<Record<AgentId, { extract: (file: string) => Recorded[]; folders: string[] }>> = {
  'claude-code': {
    extract: claudeCodeCalls,
    folders: [join(real, 'claude-code'), join(samples, 'claude-code')],
  },
  codex: { extract: codexCalls, folders: [join(real, 'codex')] },
  opencode: { extract: opencodeCalls, folders: [join(real, 'opencode'), join(samples, 'opencode')] },
};

function recordedCalls(agent: AgentId): Recorded[] {
  const recording = recordings[agent];
  if (recording === undefined) return [];
  return recording.folders.flatMap((dir) => filesUnder(dir).flatMap(recording.extract));
}

/** Why a recorded name needs no catalogue entry, or undefined when it must have one. */
function exemption(agent: AgentId, name: string): string | undefined {
  if (name.startsWith('mcp__')) return 'an MCP tool';
  if (!isOfferableName(name)) return 'redacted by the publisher';
  if (agent === 'opencode' && name === 'invalid') return 'never offered to the model';
  return undefined;
}

const withCalls = agents.filter((agent) => recordings[agent] !== undefined);

describe('the catalogue against recorded tool calls', () => {
  describe.each(withCalls)('%s', (agent) => {
    const calls = recordedCalls(agent);
    const specs = new Map(catalogue(agent).tools.map((spec) => [spec.name, spec]));

    it('has recorded calls to check', () => {
      expect(calls.length).toBeGreaterThan(0);
    });

    it('knows every recorded tool name that is not MCP', () => {
      const unknown = new Set(
        calls
          .filter((call) => !specs.has(call.name) && exemption(agent, call.name) === undefined)
          .map((call) => call.name),
      );
      expect([...unknown]).toEqual([]);
    });

    it('declares every recorded argument key, at every depth', () => {
      const undeclared = calls.flatMap((call) => {
        const spec = specs.get(call.name);
        if (spec === undefined || call.input === undefined) return [];
        return undeclaredKeys(call.input, spec.parameters).map(
          (key) => `${call.name}.${key} (${relative(root, call.where)})`,
        );
      });
      expect([...new Set(undeclared)]).toEqual([]);
    });

    it('requires nothing a recorded call left out', () => {
      const missing = calls.flatMap((call) => {
        const spec = specs.get(call.name);
        if (spec === undefined || call.input === undefined) return [];
        const input = call.input;
        return (spec.parameters.required ?? [])
          .filter((key) => !Object.hasOwn(input, key))
          .map((key) => `${call.name}.${key} (${relative(root, call.where)})`);
      });
      expect([...new Set(missing)]).toEqual([]);
    });
  });
});
