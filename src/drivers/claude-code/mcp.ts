// Stand-ins for the MCP tools a recorded session used. The user's MCP servers are never started (a server in a
// config is started at launch: code execution), but a session that called `mcp__github__create_issue` was
// offered that tool, and a replay without it shows the model a different tool list. So each recorded server
// gets a stand-in: a stdio MCP server of our own, written into the private tree, that lists the recorded
// tools with their recorded descriptions and schemas and runs nothing. A call of one is denied by the hook
// like any other (and answered from the recording by the proxy); should one reach the stand-in anyway, it
// answers with an error and does nothing else.
import type { Message } from '../../model/session.js';

export interface StandInTool {
  /** The tool's name on its server (`create_issue` of `mcp__github__create_issue`). */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What a stand-in tool answers if a call ever reaches it (the hook denies it first). */
export const standInRefusal =
  'replay-history: a stand-in for a recorded MCP tool; nothing was run (the recording answers this call)';

/** `mcp__<server>__<tool>` → its server and tool, as Claude Code names MCP tools. */
export function mcpName(name: string): { server: string; tool: string } | undefined {
  const match = /^mcp__(.+?)__(.+)$/.exec(name);
  return match ? { server: match[1] as string, tool: match[2] as string } : undefined;
}

/**
 * The stand-ins a session needs, by server: every MCP tool of its recorded request (definitions as sent),
 * and any other MCP tool it called, with a schema that takes any object — the recording has no definition of
 * it, so what the model sees of that tool differs from what it saw (its pairs say so).
 */
export function standIns(
  requestTools: readonly unknown[] | undefined,
  messages: readonly Message[],
): { servers: Map<string, StandInTool[]>; guessed: string[] } {
  const servers = new Map<string, StandInTool[]>();
  const add = (full: string, tool: StandInTool): void => {
    const named = mcpName(full);
    if (!named) return;
    const list = servers.get(named.server) ?? [];
    if (list.some((known) => known.name === named.tool)) return;
    list.push({ ...tool, name: named.tool });
    servers.set(named.server, list);
  };
  for (const definition of requestTools ?? []) {
    const { name, description, input_schema } = definition as {
      name?: unknown;
      description?: unknown;
      input_schema?: unknown;
    };
    if (typeof name !== 'string') continue;
    add(name, {
      name,
      description: typeof description === 'string' ? description : '',
      inputSchema: isObject(input_schema) ? input_schema : { type: 'object' },
    });
  }
  const guessed: string[] = [];
  for (const message of messages)
    for (const part of message.parts) {
      if (part.type !== 'tool_call' || !mcpName(part.name)) continue;
      const named = mcpName(part.name);
      if (named && servers.get(named.server)?.some((tool) => tool.name === named.tool)) continue;
      guessed.push(part.name);
      add(part.name, { name: part.name, description: '', inputSchema: { type: 'object' } });
    }
  return { servers, guessed };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The stand-in server, run by node: MCP over stdio (one JSON-RPC message per line). It answers `initialize`,
 * `ping` and `tools/list` from the file it is given, `tools/call` with an error result, and any other request
 * with "method not found". It reads no other file, opens no socket and starts no process.
 */
export function standInScript(): string {
  return `// replay-history: a stand-in MCP server. It lists recorded tools and runs none of them.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const { name, tools } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const refusal = ${JSON.stringify(standInRefusal)};
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return send({ id: null, error: { code: -32700, message: 'parse error' } });
  }
  if (request === null || typeof request !== 'object' || request.id === undefined) return;
  const { id, method, params } = request;
  if (method === 'initialize')
    return send({
      id,
      result: {
        protocolVersion: params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name, version: '0.0.0-replay-history' },
      },
    });
  if (method === 'ping') return send({ id, result: {} });
  if (method === 'tools/list') return send({ id, result: { tools } });
  if (method === 'tools/call')
    return send({ id, result: { isError: true, content: [{ type: 'text', text: refusal }] } });
  send({ id, error: { code: -32601, message: 'method not found: ' + method } });
});
`;
}

/** The `--mcp-config` JSON: each server a stand-in run by this node, reading its own tools file. */
export function mcpConfig(toolFiles: ReadonlyMap<string, string>, script: string): string {
  const mcpServers: Record<string, unknown> = {};
  for (const [server, file] of toolFiles)
    mcpServers[server] = { type: 'stdio', command: process.execPath, args: [script, file], env: {} };
  return `${JSON.stringify({ mcpServers }, null, 2)}\n`;
}
