// The sessions the real opencode binary records for our tests and samples: a bug fix over three user messages
// (glob, grep, read, a failing read, edit, bash, write, a `task` sub-agent, an automatic compaction) and a
// second session whose only model call fails. The scripted model server answers every call.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import {
  type ChatRequest,
  contentText,
  type ModelServer,
  type ScriptedReply,
  startModelServer,
} from './model-server.js';
import {
  type OpencodeHome,
  type OpencodeRun,
  opencodeBinary,
  opencodeHome,
  opencodeRun,
} from './opencode.js';

export const prompts = {
  fix: 'GET /todos?limit=5 returns only 4 items. Find the bug and fix it.',
  changelog: 'Add a CHANGELOG entry, and have a sub-agent check that the tests cover the limit.',
  thanks: 'Thanks! In one line: what changed?',
  failing: 'Say hello.',
} as const;

export const titles = { fix: 'Fix todos limit off-by-one', failing: 'Greeting' } as const;
export const summary = [
  '## Objective',
  '- Fix GET /todos?limit=5 returning 4 items.',
  '',
  '## Work State',
  '### Completed',
  '- Fixed the off-by-one in src/todos.js, added a CHANGELOG entry; a sub-agent checked the tests.',
].join('\n');

const todos = `const todos = require('./data.json');

function list(limit) {
  return todos.slice(0, limit - 1);
}

module.exports = { list };
`;

/** The bug report `webfetch` reads: a small HTML page on 127.0.0.1 (opencode converts it to markdown). */
async function startIssuePage(): Promise<{ url: string; close: () => Promise<void> }> {
  const page =
    '<html><head><title>Issue 12</title></head><body><h1>limit returns one item too few</h1>' +
    '<p><code>GET /todos?limit=5</code> returns 4 items.</p></body></html>';
  const server = createServer((_, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The scripted model: agent steps in order; titles and compaction summaries by their system prompts. */
function script(
  project: string,
  issueUrl: string,
): {
  side: (request: ChatRequest) => ScriptedReply | undefined;
  steps: ScriptedReply[];
} {
  const file = (name: string) => join(project, name);
  const steps: ScriptedReply[] = [
    // First user message: read the bug report, find and fix.
    {
      text: 'Let me read the bug report first.',
      toolCalls: [{ name: 'webfetch', arguments: { url: issueUrl, format: 'markdown' } }],
    },
    {
      reasoning: 'The limit handling must be in the route code. Let me find it.',
      text: 'Let me find where the limit is applied.',
      toolCalls: [
        { name: 'glob', arguments: { pattern: 'src/**/*.js' } },
        { name: 'grep', arguments: { pattern: 'limit', include: '*.js' } },
      ],
    },
    { toolCalls: [{ name: 'read', arguments: { filePath: file('src/todos.js') } }] },
    { toolCalls: [{ name: 'read', arguments: { filePath: file('src/routes.js') } }] },
    {
      text: 'The slice drops one item: `limit - 1`. Fixing it.',
      toolCalls: [
        {
          name: 'edit',
          arguments: {
            filePath: file('src/todos.js'),
            oldString: 'todos.slice(0, limit - 1)',
            newString: 'todos.slice(0, limit)',
          },
        },
      ],
    },
    {
      toolCalls: [
        { name: 'bash', arguments: { command: 'node test.js', description: 'Run the limit test' } },
      ],
    },
    {
      toolCalls: [
        { name: 'bash', arguments: { command: 'rm debug.log', description: 'Remove the stray debug log' } },
      ],
    },
    {
      text: 'Fixed: `list(limit)` sliced `limit - 1` items; it now returns exactly `limit`. The test passes.',
    },
    // Second user message: changelog and a sub-agent.
    {
      toolCalls: [
        {
          name: 'write',
          arguments: {
            filePath: file('CHANGELOG.md'),
            content: '# Changelog\n\n- Fix: `?limit=N` returns N todos.\n',
          },
        },
      ],
    },
    {
      toolCalls: [
        {
          name: 'task',
          arguments: {
            description: 'Check limit tests',
            prompt: 'Check that test.js covers the limit parameter. Answer in one sentence.',
            subagent_type: 'general',
          },
        },
      ],
    },
    // The sub-agent's own steps.
    { toolCalls: [{ name: 'read', arguments: { filePath: file('test.js') } }] },
    { text: 'Yes: test.js asserts that list(5) returns 5 items.' },
    // Back in the parent; reporting a large prompt makes opencode compact the session after this step.
    {
      text: 'Added the CHANGELOG entry; the sub-agent confirmed the tests cover the limit.',
      usage: { promptTokens: 60_000, completionTokens: 20 },
    },
    // After the compaction opencode asks the model to continue.
    { text: 'Nothing left to do.' },
    // Third user message.
    { text: 'The todo list now returns exactly `limit` items (off-by-one in src/todos.js).' },
  ];
  const side = (request: ChatRequest): ScriptedReply | undefined => {
    const system = contentText(request.messages?.[0]?.content);
    if (system.includes('title generator')) {
      const prompt = contentText(request.messages?.at(-1)?.content);
      return { text: prompt.includes(prompts.failing) ? titles.failing : titles.fix };
    }
    if (system.includes('summarization')) return { text: summary };
    return undefined;
  };
  return { side, steps };
}

export interface Recorded {
  home: OpencodeHome;
  /** Every request the scripted model got. */
  requests: ModelServer['requests'];
  runs: OpencodeRun[];
  /** opencode's ids of the bug-fix session and of the session whose model call failed. */
  mainId: string;
  failingId: string;
  /** `opencode export <mainId>` as printed. */
  exported: string;
  /** How long the binary ran, all runs together. */
  elapsedMs: number;
}

/**
 * Runs the real opencode against the scripted server and leaves its data dir in `home.dataDir`. The caller
 * removes `home`. `project` fixes the project path (sample regeneration); default: inside the temporary home.
 */
export async function recordOpencodeSessions(options: { project?: string } = {}): Promise<Recorded> {
  const server = await startModelServer({ models: ['scripted'] });
  const issues = await startIssuePage();
  const started = Date.now();
  let home: OpencodeHome | undefined;
  try {
    home = opencodeHome({ baseURL: server.baseURL, contextLimit: 32_000, project: options.project });
    const project = home.project;
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'src', 'todos.js'), todos);
    writeFileSync(
      join(project, 'src', 'data.json'),
      `${JSON.stringify([1, 2, 3, 4, 5, 6].map((id) => ({ id, title: `todo ${id}` })))}\n`,
    );
    writeFileSync(
      join(project, 'test.js'),
      "const assert = require('node:assert');\nconst { list } = require('./src/todos');\nassert.strictEqual(list(5).length, 5);\nconsole.log('ok: list(5) has 5 items');\n",
    );
    writeFileSync(join(project, 'debug.log'), 'list(5) -> 4 items\n');
    const { side, steps } = script(project, `${issues.url}/issues/12`);
    server.respondWith(side);
    server.push(...steps.slice(0, 8));
    const runs: OpencodeRun[] = [];
    const first = await opencodeRun(home, prompts.fix);
    runs.push(first);
    const mainId = first.sessionId;
    if (first.exitCode !== 0 || !mainId)
      throw new Error(`opencode run failed (${first.exitCode}): ${first.stderr.slice(-2000)}`);
    server.push(...steps.slice(8, 14));
    runs.push(await opencodeRun(home, prompts.changelog, { session: mainId }));
    server.push(...steps.slice(14));
    runs.push(await opencodeRun(home, prompts.thanks, { session: mainId }));
    // A model call that fails for good (400 is not retried): opencode records an assistant message with an error.
    server.push({ error: { status: 400, message: 'scripted model: this request is refused' } });
    const failing = await opencodeRun(home, prompts.failing);
    runs.push(failing);
    const failingId = failing.sessionId ?? '';
    for (const [index, run] of runs.entries()) {
      if (index < 3 && run.exitCode !== 0)
        throw new Error(`opencode run ${index + 1} failed (${run.exitCode}): ${run.stderr.slice(-2000)}`);
    }
    if (server.remaining() !== 0)
      throw new Error(`${server.remaining()} scripted replies were never asked for`);
    const exported = await execa(opencodeBinary(), ['export', mainId], {
      cwd: project,
      env: home.env,
      extendEnv: false,
      reject: false,
      timeout: 60_000,
      forceKillAfterDelay: 2_000,
    });
    return {
      home,
      requests: server.requests,
      runs,
      mainId,
      failingId,
      exported: String(exported.stdout ?? ''),
      elapsedMs: Date.now() - started,
    };
  } catch (error) {
    home?.remove();
    if (options.project) rmSync(options.project, { recursive: true, force: true });
    throw error;
  } finally {
    await server.close();
    await issues.close();
  }
}
