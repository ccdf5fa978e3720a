// The footing of the opencode driver, re-checked on the real opencode 1.18.33 with the scripted model server:
// our plugin's overrides answer every built-in call from the recording (nothing runs), the model is offered
// byte-identical tools, an unreachable answer server gives errors rather than execution, and a tool we did
// not override is stopped by the guard. The plugin reaches the answer server over a Unix socket with the run's
// secret, as in a replay.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/drivers/common/loopback.js';
import {
  type AnswerServer,
  type AnswerServerOptions,
  type AnswerSource,
  startAnswerServer,
} from '../../../src/drivers/opencode/answers.js';
import { type Environment, prepareEnvironment } from '../../../src/drivers/opencode/environment.js';
import type { Message } from '../../../src/model/session.js';
import { ShortCircuit } from '../../../src/replay/shortcircuit.js';
import {
  type ChatMessage,
  type ModelServer,
  type ScriptedReply,
  startModelServer,
} from '../../helpers/model-server.js';
import { opencodeBinary } from '../../helpers/opencode.js';

interface Run {
  exitCode: number;
  stderr: string;
  ms: number;
  events: { type: string; part?: { tool?: string; state?: Record<string, unknown> } }[];
}

/** `opencode run` with the prompt on stdin, in the prepared environment only. */
async function opencode(env: Environment, prompt: string, extraArgs: string[] = []): Promise<Run> {
  const started = performance.now();
  const result = await execa(opencodeBinary(), ['run', '--format', 'json', ...extraArgs], {
    cwd: env.workspace,
    env: env.env,
    extendEnv: false,
    input: prompt,
    reject: false,
    timeout: 120_000,
    forceKillAfterDelay: 2_000,
  });
  const events: Run['events'] = [];
  for (const line of String(result.stdout ?? '').split('\n')) {
    if (line.startsWith('{')) events.push(JSON.parse(line) as Run['events'][number]);
  }
  return {
    exitCode: result.exitCode ?? -1,
    stderr: String(result.stderr ?? ''),
    ms: performance.now() - started,
    events,
  };
}

/** Every file under a directory with its content: what "unchanged" is checked against. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string, prefix: string) => {
    for (const name of readdirSync(at).sort()) {
      const full = join(at, name);
      if (statSync(full).isDirectory()) walk(full, `${prefix}${name}/`);
      else out[`${prefix}${name}`] = readFileSync(full, 'utf8');
    }
  };
  walk(dir, '');
  return out;
}

/** The agent steps (requests with tools) the model server got; title generation has none. */
function agentRequests(server: ModelServer) {
  return server.chatRequests().filter((request) => (request.body?.tools?.length ?? 0) > 0);
}

function toolMessages(messages: ChatMessage[] | undefined): ChatMessage[] {
  return (messages ?? []).filter((message) => message.role === 'tool');
}

const prompt = 'Clean up the victim file and leave a note.';
const source = { file: 'recorded.jsonl', line: 1 };

let workspace: string;
let scratch: string;
const environments: Environment[] = [];
const answerServers: AnswerServer[] = [];
const servers: ModelServer[] = [];

/** A scripted model of its own per test, so the tests' opencode runs can overlap. */
async function model(...turns: ScriptedReply[]): Promise<ModelServer> {
  // Title generation (no tools) answers itself; agent steps come from the turns.
  const server = await startModelServer({
    turns,
    responders: [(request) => ((request.tools?.length ?? 0) === 0 ? { text: 'Replay' } : undefined)],
  });
  servers.push(server);
  return server;
}

const secret = newSecret();

/** An answer server on a Unix socket of its own, as the driver starts one. */
async function answerServer(
  source: AnswerSource,
  options: Omit<AnswerServerOptions, 'secret' | 'socket'> = {},
): Promise<AnswerServer> {
  const socket = join(mkdtempSync(join(scratch, 'tree-')), 'answers.sock');
  return startAnswerServer(source, { secret, socket, ...options });
}

/** What the environment hands the plugin for `server`. */
function endpoint(server: AnswerServer): { url: string; socket?: string; secret: string } {
  return { url: server.url, ...(server.socket ? { socket: server.socket } : {}), secret };
}

function environment(
  server: ModelServer,
  options: Partial<Parameters<typeof prepareEnvironment>[0]> = {},
): Environment {
  const env = prepareEnvironment({ workspace, baseURL: server.baseURL, parent: scratch, ...options });
  environments.push(env);
  return env;
}

/** How long opencode says each tool call took (its part's time.start to time.end), in ms. */
function toolTimes(run: Run): number[] {
  return run.events
    .filter((event) => event.type === 'tool_use')
    .map((event) => {
      const time = event.part?.state?.time as { start: number; end: number } | undefined;
      return time ? time.end - time.start : Number.NaN;
    });
}

/** Resolved by the plugin run with what its model was offered first; the plain run compares against it. */
let offered: (value: { tools: unknown; messages: unknown }) => void = () => {};
const pluginOffered = new Promise<{ tools: unknown; messages: unknown }>((resolve) => {
  offered = resolve;
});

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'opencode-override-'));
  // The workspace every run works in: one file the model tries to delete.
  workspace = join(scratch, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'victim.txt'), 'still here\n');
  // A project plugin: opencode must neither load it nor npm-install next to it (project config is disabled).
  mkdirSync(join(workspace, '.opencode', 'plugins'), { recursive: true });
  writeFileSync(
    join(workspace, '.opencode', 'plugins', 'project.js'),
    `import { writeFileSync } from 'node:fs';\nexport const Project = async () => { writeFileSync(${JSON.stringify(projectPluginMarker())}, 'loaded'); return {}; };\n`,
  );
});

/** Where the workspace's own plugin would leave its mark if opencode loaded it. */
function projectPluginMarker(): string {
  return join(scratch, 'project-plugin-loaded');
}

afterAll(async () => {
  for (const answers of answerServers) await answers.close();
  for (const server of servers) await server.close();
  for (const env of environments) env.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

// Concurrent: each run spends most of its time starting opencode; a contended machine can make a run take 40 s.
describe.concurrent('opencode 1.18.33 with the override plugin', { timeout: 150_000 }, () => {
  it('answers bash and write from the recording: the model gets the recorded outputs, nothing runs', async () => {
    const before = snapshot(workspace);
    const note = join(workspace, 'NOTE.md');
    const recorded: Message[] = [
      {
        role: 'assistant',
        source,
        parts: [
          {
            type: 'tool_call',
            id: 'r1',
            name: 'bash',
            input: { command: 'rm victim.txt', description: 'Remove it' },
          },
          { type: 'tool_call', id: 'r2', name: 'write', input: { filePath: note, content: 'gone\n' } },
        ],
      },
      {
        role: 'tool',
        source,
        parts: [
          { type: 'tool_result', callId: 'r1', output: 'RECORDED: removed victim.txt', isError: false },
          { type: 'tool_result', callId: 'r2', output: 'RECORDED: Wrote file successfully.', isError: false },
        ],
      },
    ];
    const circuit = new ShortCircuit(recorded, { cwd: workspace, readOnly: () => false });
    const answers = await answerServer(circuit, {
      details: (result) => ({ title: `title of ${result.callId}`, metadata: { recorded: result.callId } }),
    });
    answerServers.push(answers);
    const server = await model(
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'rm victim.txt', description: 'Remove it' } },
          { name: 'write', arguments: { filePath: note, content: 'gone\n' } },
        ],
      },
      { text: 'Done.' },
    );
    const env = environment(server, { answers: endpoint(answers) });
    const run = await opencode(env, prompt);
    const requests = agentRequests(server);
    // Handed over first, so the plain-run test fails on a diff rather than waiting if this one fails.
    offered({ tools: requests[0]?.body?.tools, messages: requests[0]?.body?.messages });
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
    expect(requests).toHaveLength(2);
    const results = toolMessages(requests[1]?.body?.messages);
    expect(results.map((message) => message.content)).toEqual([
      'RECORDED: removed victim.txt',
      'RECORDED: Wrote file successfully.',
    ]);
    expect(answers.asked.map((asked) => [asked.request.tool, asked.answer.kind])).toEqual([
      ['bash', 'hit'],
      ['write', 'hit'],
    ]);
    expect(answers.asked[0]?.request.sessionID).toMatch(/^ses_/);
    // Over the socket, with the secret: nothing opencode sent was refused.
    expect(answers.socket).toBeDefined();
    expect(answers.refused).toEqual({ host: 0, secret: 0, route: 0 });
    // The recorded title and metadata reach opencode's own record of the call.
    const used = run.events.filter((event) => event.type === 'tool_use');
    expect(
      used.map((event) => [event.part?.tool, event.part?.state?.status, event.part?.state?.title]),
    ).toEqual([
      ['bash', 'completed', 'title of r1'],
      ['write', 'completed', 'title of r2'],
    ]);
    expect(used[0]?.part?.state?.metadata).toMatchObject({ recorded: 'r1' });

    expect(existsSync(join(workspace, 'victim.txt'))).toBe(true);
    expect(snapshot(workspace)).toEqual(before);
    expect(existsSync(projectPluginMarker())).toBe(false);
    // Nothing was installed at run time: the stubbed dependency dirs are still empty.
    expect(readdirSync(join(env.configDir, 'node_modules'))).toEqual([]);
    expect(readdirSync(join(env.env.XDG_CONFIG_HOME ?? '', 'opencode', 'node_modules'))).toEqual([]);
    const server_ms = answers.asked.map((asked) => asked.ms.toFixed(2)).join(', ');
    console.log(
      `plugin run: ${run.ms.toFixed(0)} ms; per call as opencode timed it: ${toolTimes(run).join(', ')} ms; answer server: ${server_ms} ms`,
    );
  });

  it('offers the model byte-identical tools and messages to a run without the plugin', async () => {
    // The built-in bash really runs here (a harmless echo): its time is the baseline for the override's.
    const server = await model(
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo native', description: 'Say native' } }] },
      { text: 'Nothing to do.' },
    );
    const env = environment(server, { plugin: false });
    const run = await opencode(env, prompt);
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
    const plain = agentRequests(server)[0];
    const withPlugin = await pluginOffered;
    expect(JSON.stringify(plain?.body?.tools)).toBe(JSON.stringify(withPlugin.tools));
    expect((plain?.body?.tools ?? []).map((tool) => tool.function.name)).toEqual([
      'bash',
      'edit',
      'glob',
      'grep',
      'read',
      'skill',
      'task',
      'todowrite',
      'webfetch',
      'write',
    ]);
    expect(JSON.stringify(plain?.body?.messages)).toBe(JSON.stringify(withPlugin.messages));
    expect(existsSync(projectPluginMarker())).toBe(false);
    console.log(
      `plain run: ${run.ms.toFixed(0)} ms; native bash as opencode timed it: ${toolTimes(run).join(', ')} ms`,
    );
  });

  it('gives an error result, never execution, when the answer server is down', async () => {
    const before = snapshot(workspace);
    const answers = await answerServer({ answer: () => ({ kind: 'miss', nearest: [] }) });
    const dead = endpoint(answers);
    await answers.close();
    const server = await model(
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm victim.txt', description: 'Remove it' } }] },
      { text: 'Could not.' },
    );
    const env = environment(server, { answers: dead });
    const run = await opencode(env, prompt);
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
    const result = String(toolMessages(agentRequests(server)[1]?.body?.messages)[0]?.content);
    console.log(`answer server down, the model got: ${JSON.stringify(result)}`);
    expect(result).toContain('answer server unreachable');
    expect(result).toContain('nothing was run');
    expect(run.events.find((event) => event.type === 'tool_use')?.part?.state?.status).toBe('error');
    expect(existsSync(join(workspace, 'victim.txt'))).toBe(true);
    expect(snapshot(workspace)).toEqual(before);
  });

  it('stops a tool it does not override (an MCP tool) with the guard', async () => {
    const before = snapshot(workspace);
    const marker = join(scratch, 'mcp-tool-ran');
    const script = join(scratch, 'mcp-server.cjs');
    writeFileSync(script, mcpServer);
    const answers = await answerServer({ answer: () => ({ kind: 'miss', nearest: [] }) });
    answerServers.push(answers);
    const server = await model({ toolCalls: [{ name: 'probe_touch', arguments: {} }] }, { text: 'Stopped.' });
    const env = environment(server, {
      answers: endpoint(answers),
      config: {
        mcp: {
          probe: { type: 'local', command: [process.execPath, script], environment: { MARKER: marker } },
        },
      },
    });
    const run = await opencode(env, prompt);
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(0);
    const requests = agentRequests(server);
    // The MCP tool was really offered, so it is the guard (not a missing tool) that stops it.
    expect((requests[0]?.body?.tools ?? []).map((tool) => tool.function.name)).toContain('probe_touch');
    const result = String(toolMessages(requests[1]?.body?.messages)[0]?.content);
    expect(result).toContain('"probe_touch" is not answered from the recording');
    expect(existsSync(marker)).toBe(false);
    expect(answers.asked).toEqual([]);
    expect(snapshot(workspace)).toEqual(before);
  });

  it('fails the run, before the model is asked, when it is offered a tool the plugin does not know', async () => {
    const marker = join(scratch, 'custom-tool-ran');
    const answers = await answerServer({ answer: () => ({ kind: 'miss', nearest: [] }) });
    answerServers.push(answers);
    const server = await model({ toolCalls: [{ name: 'extra', arguments: {} }] }, { text: 'Ran it.' });
    const env = environment(server, { answers: endpoint(answers) });
    // A custom tool file, as a newer opencode's built-in would look to the plugin: not in its list.
    mkdirSync(join(env.configDir, 'tools'));
    writeFileSync(
      join(env.configDir, 'tools', 'extra.js'),
      `import { writeFileSync } from 'node:fs';\nexport default { description: 'Extra.', args: {}, execute: async () => { writeFileSync(${JSON.stringify(marker)}, 'ran'); return 'ran'; } };\n`,
    );
    const run = await opencode(env, prompt, ['--print-logs', '--log-level', 'WARN']);
    console.log(
      `unknown tool offered: exit ${run.exitCode} after ${run.ms.toFixed(0)} ms; events: ${run.events.map((event) => event.type).join(',')}`,
    );
    expect(agentRequests(server)).toEqual([]);
    // opencode reports only "Unexpected server error" and exits 1; the reason is in the printed log (its log
    // file misses it: the process exits before the write).
    expect(run.exitCode).toBe(1);
    expect(run.events.map((event) => event.type)).toEqual(['error']);
    expect(run.stderr).toContain('tool \\"extra\\" is offered to the model but not overridden');
    expect(existsSync(marker)).toBe(false);
  });
});

/** A minimal MCP server over stdio (newline-delimited JSON-RPC) whose one tool leaves a marker file. */
const mcpServer = String.raw`
const { writeFileSync } = require('node:fs');
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, at).trim();
    buffer = buffer.slice(at + 1);
    if (!line) continue;
    const message = JSON.parse(line);
    if (message.id === undefined) continue;
    if (message.method === 'initialize')
      send({ id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1.0.0' } } });
    else if (message.method === 'tools/list')
      send({ id: message.id, result: { tools: [{ name: 'touch', description: 'Creates a marker file.', inputSchema: { type: 'object', properties: {} } }] } });
    else if (message.method === 'tools/call') {
      writeFileSync(process.env.MARKER, 'ran');
      send({ id: message.id, result: { content: [{ type: 'text', text: 'touched' }] } });
    } else if (message.method === 'ping') send({ id: message.id, result: {} });
    else send({ id: message.id, error: { code: -32601, message: 'method not found' } });
  }
});
`;
