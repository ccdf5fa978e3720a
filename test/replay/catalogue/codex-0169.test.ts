// Codex CLI 0.169's own tool list (src/replay/catalogue/codex-0.169.ts) against the tools its real requests
// offered (test/fixtures/real/codex-0.169.0/requests-main.jsonl), and which sessions are offered it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, Session } from '../../../src/model/session.js';
import { codex0169Tools } from '../../../src/replay/catalogue/codex-0.169.js';
import { catalogue, toolListOf, toolsFor } from '../../../src/replay/catalogue/index.js';
import { responsesTools } from '../../../src/replay/responses.js';
import { root } from '../../helpers/cli.js';

const offered = (
  JSON.parse(
    JSON.parse(
      readFileSync(join(root, 'test/fixtures/real/codex-0.169.0/requests-main.jsonl'), 'utf8').split(
        '\n',
      )[0] as string,
    ).body_raw,
  ) as { tools: { type: string; name?: string; description?: string; parameters?: unknown }[] }
).tools;

const session = (version: string | undefined, calls: string[] = []): Session => ({
  id: 'x',
  agent: 'codex',
  sourceId: 'x',
  kind: 'main',
  ...(version ? { version } : {}),
  messages: calls.map(
    (name, i): Message => ({
      role: 'assistant',
      parts: [{ type: 'tool_call', id: `c${i}`, name, input: { message: 'hi' } }],
      source: { file: 'x', line: i + 1 },
    }),
  ),
});

describe('Codex 0.169’s own tools', () => {
  it('are the tools its requests offered, in their order, each function as it was sent', () => {
    expect(codex0169Tools.map((tool) => tool.name)).toEqual(offered.map((tool) => tool.name ?? tool.type));
    for (const tool of offered) {
      const spec = codex0169Tools.find((s) => s.name === (tool.name ?? tool.type));
      if (tool.type === 'function' || tool.type === 'tool_search') {
        expect(spec?.description).toBe(tool.description);
        expect(spec?.parameters).toEqual(tool.parameters);
      }
      // The freeform apply_patch keeps Codex's description, in its function form {input}.
      if (tool.type === 'custom') {
        expect(spec?.description).toBe(tool.description);
        expect(spec?.parameters.required).toEqual(['input']);
      }
    }
  });

  it('go on the Responses wire exactly as the requests carried them: the free-form, hosted and search tools in their own forms', () => {
    expect(responsesTools(codex0169Tools)).toEqual(offered);
    expect(
      responsesTools(catalogue('codex').tools).every(
        (tool) => (tool as { type: string }).type === 'function',
      ),
    ).toBe(true);
  });

  it('are offered to sessions of 0.169 and later; older ones get the catalogue written here', () => {
    expect(toolListOf(session('0.169.0')).name).toBe('codex/0.169');
    expect(toolListOf(session('0.170.2-alpha.1')).name).toBe('codex/0.169');
    expect(toolListOf(session('1.0.0')).name).toBe('codex/0.169');
    expect(toolListOf(session('0.104.0-alpha.1')).name).toBe('replay-history/codex');
    expect(toolListOf(session(undefined)).name).toBe('replay-history/codex');
    expect(toolsFor(session('0.104.0'))).toHaveLength(catalogue('codex').tools.length);
  });

  it('adds the catalogue’s spec of a tool the session called that the list leaves out (the deferred multi-agent tools)', () => {
    const names = toolsFor(session('0.169.0', ['spawn_agent', 'wait_agent', 'mcp__docs__search'])).map(
      (t) => t.name,
    );
    expect(names).toEqual([
      ...codex0169Tools.map((t) => t.name),
      'spawn_agent',
      'wait_agent',
      'mcp__docs__search',
    ]);
    const spawn = toolsFor(session('0.169.0', ['spawn_agent'])).find((t) => t.name === 'spawn_agent');
    expect(spawn).toEqual(catalogue('codex').tools.find((t) => t.name === 'spawn_agent'));
  });
});
