// The MCP stand-ins: which tools a recorded session needs, and the stand-in server itself, spoken to over stdio
// as Claude Code speaks to it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import {
  mcpConfig,
  mcpName,
  standInRefusal,
  standInScript,
  standIns,
} from '../../../src/drivers/claude-code/mcp.js';
import type { Message } from '../../../src/model/session.js';
import { tempDir } from '../../helpers/cli.js';

const dir = tempDir('replay-mcp-');
afterAll(() => dir.remove());

const call = (name: string): Message => ({
  role: 'assistant',
  parts: [{ type: 'tool_call', id: `toolu_${name}`, name, input: {} }],
  source: { file: 'x.jsonl', line: 1 },
});

describe('standIns', () => {
  it('takes the recorded definitions of MCP tools, and guesses only for a called one the request lacks', () => {
    const recorded = [
      { name: 'Bash', description: 'Run a command', input_schema: { type: 'object' } },
      {
        name: 'mcp__github__create_issue',
        description: 'Create an issue',
        input_schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      },
    ];
    const { servers, guessed } = standIns(recorded, [
      call('mcp__github__create_issue'),
      call('mcp__docs__search'),
      call('Read'),
    ]);
    expect([...servers.keys()]).toEqual(['github', 'docs']);
    expect(servers.get('github')).toEqual([
      {
        name: 'create_issue',
        description: 'Create an issue',
        inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      },
    ]);
    expect(servers.get('docs')).toEqual([
      { name: 'search', description: '', inputSchema: { type: 'object' } },
    ]);
    expect(guessed).toEqual(['mcp__docs__search']);
  });

  it('reads a server and tool out of Claude Code’s name, the tool keeping any later “__”', () => {
    expect(mcpName('mcp__github__create_issue')).toEqual({ server: 'github', tool: 'create_issue' });
    expect(mcpName('mcp__a__b__c')).toEqual({ server: 'a', tool: 'b__c' });
    expect(mcpName('Bash')).toBeUndefined();
    expect(mcpName('mcp__only')).toBeUndefined();
  });
});

describe('the stand-in server', () => {
  it('lists the recorded tools, answers a call with an error and runs nothing', async () => {
    const root = join(dir.path, 'server');
    mkdirSync(root);
    const script = join(root, 'stand-in.mjs');
    const tools = join(root, 'tools.json');
    writeFileSync(script, standInScript());
    const listed = [
      { name: 'create_issue', description: 'Create an issue', inputSchema: { type: 'object' } },
    ];
    writeFileSync(tools, JSON.stringify({ name: 'github', tools: listed }));
    const marker = join(root, 'ran');
    const input = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {} },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'create_issue', arguments: { title: `$(touch ${marker})` } },
      },
      { jsonrpc: '2.0', id: 4, method: 'resources/list' },
      'not json',
    ]
      .map((message) => (typeof message === 'string' ? message : JSON.stringify(message)))
      .join('\n');
    const { stdout, exitCode } = await execa(process.execPath, [script, tools], { input, reject: false });
    expect(exitCode).toBe(0);
    const answers = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(answers).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'github', version: '0.0.0-replay-history' },
        },
      },
      { jsonrpc: '2.0', id: 2, result: { tools: listed } },
      { jsonrpc: '2.0', id: 3, result: { isError: true, content: [{ type: 'text', text: standInRefusal }] } },
      { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'method not found: resources/list' } },
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } },
    ]);
    expect(existsSync(marker)).toBe(false);
  });

  it('is named in the MCP config by server, run by this node with its own tools file', () => {
    const config = JSON.parse(
      mcpConfig(new Map([['github', '/private/github.json']]), '/private/stand-in.mjs'),
    );
    expect(config).toEqual({
      mcpServers: {
        github: {
          type: 'stdio',
          command: process.execPath,
          args: ['/private/stand-in.mjs', '/private/github.json'],
          env: {},
        },
      },
    });
  });
});
