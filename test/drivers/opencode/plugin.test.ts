// The plugin's logic without opencode: its source is loaded as opencode loads it (an ES module file) and its
// hooks are called the way opencode 1.18.33 calls them. The real-binary checks are in override.test.ts. Over a
// Unix socket the plugin needs Bun's fetch: that case runs in the Bun inside the opencode binary itself.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/drivers/common/loopback.js';
import { type AnswerServer, startAnswerServer } from '../../../src/drivers/opencode/answers.js';
import {
  answersSocketEnv,
  answersUrlEnv,
  builtinTools,
  modelSocketEnv,
  overrideMarker,
  pluginSource,
} from '../../../src/drivers/opencode/plugin.js';
import type { Answer } from '../../../src/replay/shortcircuit.js';
import { opencodeBinary } from '../../helpers/opencode.js';

const secret = newSecret();

interface Definition {
  description: string;
  parameters: unknown;
  jsonSchema?: unknown;
}
interface Hooks {
  tool: Record<
    string,
    { description: string; args: object; execute(args: unknown, ctx: object): Promise<unknown> }
  >;
  'tool.definition'(input: { toolID: string }, output: Definition): Promise<void>;
  'tool.execute.before'(
    input: { tool: string; sessionID: string; callID: string },
    output: object,
  ): Promise<void>;
}

let dir: string;
let count = 0;
const servers: AnswerServer[] = [];

/** Writes the source to a file and imports it, as opencode does with `plugins/*.js`. */
async function load(options: Parameters<typeof pluginSource>[0] = {}): Promise<Hooks> {
  const file = join(dir, `plugin-${++count}.js`);
  writeFileSync(file, pluginSource(options));
  const module = (await import(pathToFileURL(file).href)) as { ReplayHistoryOverrides: () => Promise<Hooks> };
  expect(Object.keys(module)).toEqual(['ReplayHistoryOverrides']);
  return module.ReplayHistoryOverrides();
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'opencode-plugin-'));
});
afterEach(() => {
  delete process.env[answersUrlEnv];
  delete process.env[modelSocketEnv];
});
afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctx = { sessionID: 'ses_1', messageID: 'msg_1', callID: 'call_1', agent: 'build' };

describe('the override plugin', () => {
  it("gives opencode's provider a fetch to the proxy's socket only when there is one", async () => {
    const plain = (await load()) as Hooks & { auth?: unknown };
    expect(plain.auth).toBeUndefined();
    process.env[modelSocketEnv] = '/run/replay/proxy.sock';
    const hooks = (await load()) as Hooks & {
      auth?: { provider: string; loader(): Promise<{ fetch?: unknown }>; methods: unknown[] };
    };
    expect(hooks.auth?.provider).toBe('replay');
    expect(hooks.auth?.methods).toEqual([{ type: 'api', label: 'replay-history' }]);
    expect(typeof (await hooks.auth?.loader())?.fetch).toBe('function');
  });

  it('overrides every listed built-in with a plain tool object', async () => {
    const hooks = await load();
    expect(Object.keys(hooks.tool)).toEqual([...builtinTools]);
    for (const [id, tool] of Object.entries(hooks.tool)) {
      expect(tool.description).toBe(`${overrideMarker}${id}`);
      expect(tool.args).toEqual({});
    }
  });

  it("puts the built-in's very definition objects on the override, whichever fires first", async () => {
    const hooks = await load();
    const parameters = { ast: {}, fields: {} };
    const builtin: Definition = { description: 'Runs a command.', parameters, jsonSchema: undefined };
    // The built-in first, as 1.18.33 does.
    await hooks['tool.definition']({ toolID: 'bash' }, builtin);
    const ours: Definition = {
      description: `${overrideMarker}bash`,
      parameters: {},
      jsonSchema: { type: 'object' },
    };
    await hooks['tool.definition']({ toolID: 'bash' }, ours);
    expect(ours.description).toBe('Runs a command.');
    expect(ours.parameters).toBe(parameters);
    expect(ours.jsonSchema).toBeUndefined();
    // The override first: it waits for the built-in.
    const readParameters = { ast: {} };
    const early: Definition = { description: `${overrideMarker}read`, parameters: {} };
    const pending = hooks['tool.definition']({ toolID: 'read' }, early);
    await hooks['tool.definition']({ toolID: 'read' }, { description: 'Reads.', parameters: readParameters });
    await pending;
    expect(early).toEqual({ description: 'Reads.', parameters: readParameters, jsonSchema: undefined });
    expect(early.parameters).toBe(readParameters);
  });

  it('fails the definition of a tool it does not know, and of an override with no built-in', async () => {
    const hooks = await load({ definitionWaitMs: 50 });
    await expect(
      hooks['tool.definition']({ toolID: 'lsp' }, { description: 'LSP.', parameters: {} }),
    ).rejects.toThrow('tool "lsp" is offered to the model but not overridden');
    await expect(
      hooks['tool.definition']({ toolID: 'glob' }, { description: `${overrideMarker}glob`, parameters: {} }),
    ).rejects.toThrow('no built-in "glob"');
    // `invalid` (opencode's unknown-tool handler) is known and left alone.
    await hooks['tool.definition']({ toolID: 'invalid' }, { description: 'Invalid.', parameters: {} });
  });

  it('guards: only overrides and `invalid` may run', async () => {
    const hooks = await load();
    const guard = hooks['tool.execute.before'];
    await guard({ tool: 'bash', sessionID: 's', callID: 'c' }, { args: {} });
    await guard({ tool: 'invalid', sessionID: 's', callID: 'c' }, { args: {} });
    await expect(
      guard({ tool: 'github_create_issue', sessionID: 's', callID: 'c' }, { args: {} }),
    ).rejects.toThrow('tool "github_create_issue" is not answered from the recording; it was not run');
  });

  it('returns the recorded title, output and metadata; throws recorded errors and misses', async () => {
    const answers: Answer[] = [
      {
        kind: 'hit',
        how: 'exact',
        result: { type: 'tool_result', callId: 'r1', output: 'file body', isError: false },
      },
      {
        kind: 'hit',
        how: 'exact',
        result: { type: 'tool_result', callId: 'r2', output: 'Error: no such file', isError: true },
      },
      { kind: 'miss', nearest: [{ name: 'read', input: { filePath: 'a' }, differs: ['filePath'] }] },
    ];
    const server = await startAnswerServer(
      { answer: () => answers.shift() ?? { kind: 'miss', nearest: [] } },
      { secret, details: (result) => ({ title: `t-${result.callId}`, metadata: { n: 1 } }) },
    );
    servers.push(server);
    process.env[answersUrlEnv] = server.url;
    const hooks = await load({ secret });
    const read = hooks.tool.read;
    await expect(read?.execute({ filePath: 'a' }, ctx)).resolves.toEqual({
      title: 't-r1',
      output: 'file body',
      metadata: { n: 1 },
    });
    await expect(read?.execute({ filePath: 'a' }, ctx)).rejects.toThrow(/^Error: no such file$/);
    await expect(read?.execute({ filePath: 'b' }, ctx)).rejects.toThrow(
      'replay-history: read {"filePath":"b"} is not in the recording; nothing was run.',
    );
    expect(server.asked.map((asked) => asked.request)).toEqual(
      [{ filePath: 'a' }, { filePath: 'a' }, { filePath: 'b' }].map((args) => ({
        tool: 'read',
        args,
        callID: 'call_1',
        sessionID: 'ses_1',
        messageID: 'msg_1',
        agent: 'build',
      })),
    );
  });

  it('gives an error, never a result, when the answer server is unset, down, failing or slow', async () => {
    const hooks = await load({ timeoutMs: 200 });
    const bash = hooks.tool.bash;
    await expect(bash?.execute({ command: 'rm -rf /' }, ctx)).rejects.toThrow(`${answersUrlEnv} is unset`);

    const closed = await startAnswerServer({ answer: () => ({ kind: 'miss', nearest: [] }) }, { secret });
    await closed.close();
    process.env[answersUrlEnv] = closed.url;
    await expect(bash?.execute({ command: 'rm -rf /' }, ctx)).rejects.toThrow('answer server unreachable');

    const { createServer } = await import('node:http');
    const bad = createServer((req, res) => {
      if (req.url === '/slow') return; // never answers
      res.writeHead(req.url === '/500' ? 500 : 200, { 'content-type': 'application/json' });
      res.end(req.url === '/500' ? '{}' : '{"title":"x"}');
    });
    await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', resolve));
    const port = (bad.address() as { port: number }).port;
    try {
      process.env[answersUrlEnv] = `http://127.0.0.1:${port}/500`;
      await expect(bash?.execute({}, ctx)).rejects.toThrow('HTTP 500');
      process.env[answersUrlEnv] = `http://127.0.0.1:${port}/empty`;
      await expect(bash?.execute({}, ctx)).rejects.toThrow('sent no output');
      process.env[answersUrlEnv] = `http://127.0.0.1:${port}/slow`;
      await expect(bash?.execute({}, ctx)).rejects.toThrow('answer server unreachable');
    } finally {
      bad.closeAllConnections();
      await new Promise<void>((resolve) => bad.close(() => resolve()));
    }
  });
});

describe("the override plugin and the answer server's secret", () => {
  it("is refused (an error result, nothing answered) with no secret or another run's", async () => {
    let asked = 0;
    const server = await startAnswerServer(
      {
        answer: () => {
          asked++;
          return { kind: 'miss', nearest: [] };
        },
      },
      { secret },
    );
    servers.push(server);
    process.env[answersUrlEnv] = server.url;
    for (const other of [undefined, newSecret()]) {
      const hooks = await load(other ? { secret: other } : {});
      await expect(hooks.tool.bash?.execute({ command: 'ls' }, ctx)).rejects.toThrow(
        'replay-history: answer server said HTTP 401; nothing was run',
      );
    }
    expect(asked).toBe(0);
    expect(server.refused.secret).toBe(2);
  });

  it('reaches the server over its Unix socket in Bun (the runtime inside opencode), with the secret', async () => {
    const answers: Answer[] = [
      {
        kind: 'hit',
        how: 'exact',
        result: { type: 'tool_result', callId: 'r1', output: 'over the socket', isError: false },
      },
    ];
    const socket = join(mkdtempSync(join(dir, 'tree-')), 'answers.sock');
    const server = await startAnswerServer(
      { answer: () => answers.shift() ?? { kind: 'miss', nearest: [] } },
      { secret, socket },
    );
    servers.push(server);
    const plugin = join(dir, `plugin-${++count}.js`);
    writeFileSync(plugin, pluginSource({ secret }));
    const script = join(dir, 'in-bun.mjs');
    writeFileSync(
      script,
      `const { ReplayHistoryOverrides } = await import(${JSON.stringify(pathToFileURL(plugin).href)});
const hooks = await ReplayHistoryOverrides();
const ctx = ${JSON.stringify(ctx)};
const out = [];
for (let i = 0; i < 2; i++) {
  try { out.push({ ok: await hooks.tool.read.execute({ filePath: 'a' }, ctx) }); }
  catch (error) { out.push({ error: String(error.message) }); }
}
console.log(JSON.stringify({ bun: typeof Bun === 'object', out }));
`,
    );
    // The binary is Bun: BUN_BE_BUN makes it run a script instead of opencode.
    const ran = await execa(opencodeBinary(), [script], {
      env: {
        BUN_BE_BUN: '1',
        [answersUrlEnv]: server.url,
        [answersSocketEnv]: socket,
        PATH: process.env.PATH ?? '',
      },
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    expect(ran.exitCode, String(ran.stderr)).toBe(0);
    expect(JSON.parse(String(ran.stdout))).toEqual({
      bun: true,
      out: [
        { ok: { title: '', output: 'over the socket', metadata: {} } },
        { error: 'replay-history: read {"filePath":"a"} is not in the recording; nothing was run.' },
      ],
    });
    expect(server.url).toBe('http://localhost:0/answer');
    expect(server.asked.map((entry) => entry.request.tool)).toEqual(['read', 'read']);
    expect(server.refused).toEqual({ host: 0, secret: 0, route: 0 });
  });
});
