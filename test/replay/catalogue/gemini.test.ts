// Gemini CLI 0.61's own tools (src/replay/catalogue/gemini.ts) against the functionDeclarations its real requests
// offered (test/fixtures/real/gemini-cli-0.61.0/requests.jsonl): the main agent's, and the sub-agent's last tool.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { geminiSubagentTools, geminiTools } from '../../../src/replay/catalogue/gemini.js';
import { catalogue, isReadOnly, toolListOf } from '../../../src/replay/catalogue/index.js';
import { root } from '../../helpers/cli.js';

interface Declaration {
  name: string;
  description: string;
  parametersJsonSchema: unknown;
}

const requests = readFileSync(join(root, 'test/fixtures/real/gemini-cli-0.61.0/requests.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { seq: number; url: string; body: string })
  .filter((request) => request.url.includes(':streamGenerateContent'))
  .map((request) => ({
    seq: request.seq,
    declarations: (
      JSON.parse(request.body) as { tools: { functionDeclarations: Declaration[] }[] }
    ).tools.flatMap((tool) => tool.functionDeclarations),
  }));
const asSent = (tool: { name: string; description: string; parameters: unknown }) => ({
  name: tool.name,
  description: tool.description,
  parametersJsonSchema: tool.parameters,
});
// The sub-agent's two turns (SOURCES.md: seq 4 and 5) were offered its own set.
const subagent = new Set([4, 5]);

describe('Gemini CLI 0.61’s own tools', () => {
  it('are what every main-agent request offered, in order: names, descriptions and parameters as sent', () => {
    const main = requests.filter((request) => !subagent.has(request.seq));
    expect(main).toHaveLength(11);
    for (const request of main)
      expect(geminiTools.map(asSent), `seq ${request.seq}`).toEqual(request.declarations);
  });

  it('hold complete_task as the sub-agent was offered it, apart from the main list', () => {
    for (const request of requests.filter((r) => subagent.has(r.seq))) {
      expect(request.declarations.map((d) => d.name)).toEqual([
        ...geminiTools
          .map((t) => t.name)
          .filter((name) => name !== 'update_topic' && name !== 'invoke_agent'),
        'complete_task',
      ]);
      expect(request.declarations.at(-1)).toEqual(
        asSent(geminiSubagentTools[0] as (typeof geminiSubagentTools)[0]),
      );
    }
    expect(geminiTools.some((tool) => tool.name === 'complete_task')).toBe(false);
  });

  it('are the gemini catalogue, with a system prompt of ours and read-only flags only for reading, listing, searching, fetching', () => {
    expect(catalogue('gemini').tools.map((t) => t.name)).toEqual(geminiTools.map((t) => t.name));
    expect(catalogue('gemini').systemPrompt).toMatch(/^You are a coding agent/);
    expect(toolListOf({ agent: 'gemini', version: undefined }).name).toBe('replay-history/gemini');
    expect(geminiTools.filter((tool) => tool.readOnly).map((tool) => tool.name)).toEqual([
      'list_directory',
      'read_file',
      'grep_search',
      'glob',
      'web_fetch',
      'list_background_processes',
      'read_background_output',
      'google_web_search',
    ]);
    expect(isReadOnly('gemini', 'run_shell_command')).toBe(false);
  });
});
