// Qwen Code 0.24.4's own tool list (src/replay/catalogue/qwen.ts) against the tools its real requests offered
// (test/fixtures/real/qwen-code-0.24.4/requests.jsonl): every agent request offered the same 14, in this order.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalogue, isReadOnly } from '../../../src/replay/catalogue/index.js';
import { qwenTools } from '../../../src/replay/catalogue/qwen.js';
import { chatTools } from '../../../src/replay/chat.js';
import { root } from '../../helpers/cli.js';

interface Offered {
  type: string;
  function: { name: string; description: string; parameters?: Record<string, unknown> };
}

const requests = readFileSync(join(root, 'test/fixtures/real/qwen-code-0.24.4/requests.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(JSON.parse(line).body) as { messages: { content: unknown }[]; tools: Offered[] });
const [first] = requests;
const offered = first?.tools ?? [];

describe('Qwen Code 0.24.4’s own tools', () => {
  it('are the tools its first request offered, in their order, names, descriptions and parameters as sent', () => {
    expect(offered).toHaveLength(14);
    expect(qwenTools.map((tool) => tool.name)).toEqual(offered.map((tool) => tool.function.name));
    for (const tool of offered) {
      const spec = qwenTools.find((s) => s.name === tool.function.name);
      expect(spec?.description, tool.function.name).toBe(tool.function.description);
      // Two tools were sent without parameters: an empty object schema stands for them.
      expect(spec?.parameters, tool.function.name).toEqual(
        tool.function.parameters ?? { type: 'object', properties: {} },
      );
    }
  });

  it('go on the chat wire as the requests carried them (but the two parameterless ones)', () => {
    const sent = offered.filter((tool) => tool.function.parameters !== undefined);
    const ours = chatTools(qwenTools).filter((tool) =>
      sent.some((s) => s.function.name === tool.function.name),
    );
    expect(ours).toEqual(sent);
  });

  it('are what every main-agent request offered (the memory extractor had its own six)', () => {
    const names = (tools: Offered[]) => tools.map((tool) => tool.function.name);
    const extractor = requests.filter((r) =>
      String(r.messages[0]?.content).startsWith('You are now acting as the managed memory extraction'),
    );
    expect(extractor).toHaveLength(1);
    expect(names(extractor[0]?.tools ?? [])).toEqual([
      'read_file',
      'grep_search',
      'glob',
      'run_shell_command',
      'write_file',
      'edit',
    ]);
    for (const request of requests.filter((r) => !extractor.includes(r)))
      expect(names(request.tools)).toEqual(names(offered));
  });

  it('are the qwen catalogue, with reads and searches read-only and anything that acts not', () => {
    expect(catalogue('qwen').tools.map((tool) => tool.name)).toEqual(qwenTools.map((tool) => tool.name));
    const readOnly = qwenTools.filter((tool) => tool.readOnly).map((tool) => tool.name);
    expect(readOnly.sort()).toEqual([
      'get_goal',
      'glob',
      'grep_search',
      'list_agents',
      'read_file',
      'tool_search',
    ]);
    expect(isReadOnly('qwen', 'run_shell_command')).toBe(false);
    expect(isReadOnly('qwen', 'tool_call')).toBe(false);
  });
});
