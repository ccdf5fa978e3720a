import { describe, expect, it } from 'vitest';
import type { AgentId, Message, Session, ToolCall } from '../../../src/model/session.js';
import {
  catalogue,
  isReadOnly,
  sharedToolsFor,
  toolListOf,
  toolsFor,
} from '../../../src/replay/catalogue/index.js';

function call(name: string, input: unknown, id = name): ToolCall {
  return { type: 'tool_call', id, name, input };
}

function session(agent: AgentId, calls: ToolCall[][]): Session {
  const messages: Message[] = calls.map((parts, index) => ({
    role: 'assistant',
    parts,
    source: { file: 'test.jsonl', line: index + 1 },
  }));
  return { id: 's1', agent, sourceId: 'native', kind: 'main', messages };
}

describe('toolsFor', () => {
  it('is the whole catalogue, in its order, when the session only calls built-in tools', () => {
    const tools = toolsFor(session('claude-code', [[call('Read', { file_path: '/a' })], [call('Bash', {})]]));
    expect(tools.map((spec) => spec.name)).toEqual(catalogue('claude-code').tools.map((spec) => spec.name));
    expect(tools.some((spec) => spec.inferred)).toBe(false);
  });

  it('appends an inferred schema for each tool the catalogue lacks, once, after the catalogue, by name', () => {
    const tools = toolsFor(
      session('claude-code', [
        [
          call('mcp__github__create_issue', { title: 'x', body: 'y' }, 'c1'),
          call('Read', { file_path: '/a' }),
        ],
        [call('mcp__fs__list', { path: '/' }, 'c2')],
        [call('mcp__github__create_issue', { title: 'z' }, 'c3')],
      ]),
    );
    const size = catalogue('claude-code').tools.length;
    expect(tools).toHaveLength(size + 2);
    const added = tools.slice(size);
    expect(added.map((spec) => spec.name)).toEqual(['mcp__fs__list', 'mcp__github__create_issue']);
    const issue = added[1];
    expect(issue).toMatchObject({
      name: 'mcp__github__create_issue',
      readOnly: false,
      inferred: true,
      parameters: {
        type: 'object',
        properties: { title: { type: 'string' }, body: { type: 'string' } },
        required: ['title'],
      },
    });
    expect(issue?.description).toContain('"create_issue" tool of the MCP server "github"');
    expect(issue?.description).toContain('2 recorded calls');
  });

  it('gives the same list whatever order the calls came in', () => {
    const first = [call('zeta', { a: 1 }, '1'), call('alpha', { b: 'x' }, '2')];
    const second = [call('alpha', { b: 'x' }, '2'), call('zeta', { a: 1 }, '1')];
    expect(toolsFor(session('codex', [first]))).toEqual(toolsFor(session('codex', [second])));
    const names = toolsFor(session('codex', [first])).map((spec) => spec.name);
    expect(names.slice(-2)).toEqual(['alpha', 'zeta']);
  });

  it('keeps the catalogue schema for a built-in tool, whatever the recorded arguments look like', () => {
    const tools = toolsFor(session('opencode', [[call('bash', { command: 'ls', extra: 1 })]]));
    const bash = tools.find((spec) => spec.name === 'bash');
    expect(bash?.inferred).toBeUndefined();
    expect(bash?.parameters.properties?.extra).toBeUndefined();
    expect(tools.filter((spec) => spec.name === 'bash')).toHaveLength(1);
  });

  it('infers renamed or retired tools, which are never read-only', () => {
    const tools = toolsFor(session('opencode', [[call('list', { path: '/src' })]]));
    const list = tools.find((spec) => spec.name === 'list');
    expect(list).toMatchObject({ inferred: true, readOnly: false });
    expect(isReadOnly('opencode', 'list')).toBe(false);
  });

  it("never offers opencode's invalid tool, which only records a malformed call", () => {
    const tools = toolsFor(session('opencode', [[call('invalid', { tool: 'bsh', error: 'unknown tool' })]]));
    expect(tools.some((spec) => spec.name === 'invalid')).toBe(false);
  });

  it('leaves out recorded names no model could call (empty, or redacted by the publisher)', () => {
    const tools = toolsFor(
      session('codex', [[call('', {}, '1'), call('[REDACTED_NAME len=41 sha=6507ee77]', {}, '2')]]),
    );
    expect(tools).toHaveLength(catalogue('codex').tools.length);
  });

  it('keeps MCP names whose server name holds colons or dots (a provider-specific limit is not ours to apply)', () => {
    const tools = toolsFor(session('claude-code', [[call('mcp__plugin:sentry:sentry__search', { q: 'x' })]]));
    expect(tools.at(-1)?.name).toBe('mcp__plugin:sentry:sentry__search');
  });

  it('counts an interrupted call like any other', () => {
    const interrupted: ToolCall = { ...call('mcp__db__query', { sql: 'select 1' }), unanswered: true };
    const tools = toolsFor(session('codex', [[interrupted]]));
    expect(tools.at(-1)?.name).toBe('mcp__db__query');
  });

  it('returns copies: changing them leaves the catalogue as it was', () => {
    const tools = toolsFor(session('docker-agent', []));
    const [first] = tools;
    if (first === undefined) throw new Error('empty catalogue');
    first.description = 'changed';
    (first.parameters.properties ?? {}).injected = { type: 'string' };
    const again = catalogue('docker-agent').tools[0];
    expect(again?.description).not.toBe('changed');
    expect(again?.parameters.properties?.injected).toBeUndefined();
  });

  it('gives every session its own copies, equal to the list, whatever an earlier caller changed', () => {
    for (const agent of ['claude-code', 'codex', 'opencode', 'gemini', 'qwen', 'docker-agent'] as const) {
      const first = toolsFor(session(agent, []));
      expect(first).toEqual(toolListOf(session(agent, [])).tools);
      const [spec] = first;
      if (spec === undefined) throw new Error(`empty list for ${agent}`);
      spec.description = 'changed';
      const second = toolsFor(session(agent, []));
      expect(second[0]).not.toBe(spec);
      expect(second).toEqual(toolListOf(session(agent, [])).tools);
    }
  });

  it('shares the same specs read-only where the caller only reads them (sharedToolsFor), equal to the copies', () => {
    const calls = [
      [call('mcp__github__create_issue', { title: 'x' }, 'c1'), call('Read', { file_path: '/a' })],
      [call('spawn_agent', { message: 'go' }, 'c2')],
    ];
    for (const agent of ['claude-code', 'codex', 'opencode', 'gemini', 'qwen', 'docker-agent'] as const) {
      const shared = sharedToolsFor(session(agent, calls));
      expect(shared).toEqual(toolsFor(session(agent, calls)));
      const listed = toolListOf(session(agent, calls)).tools;
      expect(shared[0]).toBe(listed[0]);
      // a change would reach every later caller: it throws instead
      expect(() => {
        (shared[0] as { description: string }).description = 'changed';
      }).toThrow(TypeError);
      // Nothing called outside the list: the list itself, one array for every such session (what a replay
      // makes of it once per list is then made once per run); a session that adds tools gets its own.
      const plain = sharedToolsFor(session(agent, [[call('Read', { file_path: '/a' })]]));
      expect(sharedToolsFor(session(agent, []))).toBe(listed);
      expect(plain === listed).toBe(
        toolsFor(session(agent, [[call('Read', { file_path: '/a' })]])).length === listed.length,
      );
      expect(shared).not.toBe(listed);
      expect(Object.isFrozen(listed)).toBe(true);
    }
  });

  it('reads tool calls from every message, not only assistant ones', () => {
    const messages: Message[] = [
      { role: 'user', parts: [{ type: 'text', text: 'go' }], source: { file: 'f', line: 1 } },
      { role: 'assistant', parts: [call('mcp__x__y', { q: 1 })], source: { file: 'f', line: 2 } },
      {
        role: 'tool',
        parts: [{ type: 'tool_result', callId: 'mcp__x__y', output: 'ok', isError: false }],
        source: { file: 'f', line: 3 },
      },
    ];
    const tools = toolsFor({ id: 's', agent: 'docker-agent', sourceId: 'n', kind: 'main', messages });
    expect(tools.at(-1)).toMatchObject({ name: 'mcp__x__y', parameters: { required: ['q'] } });
  });
});
