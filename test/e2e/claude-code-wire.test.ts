// Issue 14, the replay side: a forced replay of the real Claude Code 2.1.328 sessions with `--model anthropic:…`
// sends each turn the request the model received when it was recorded (test/fixtures/real/claude-code-2.1.328/
// requests.jsonl, logged by the model server): the same system blocks, tools, messages, params and betas — only
// the model, the key and the stream flag are ours, and Claude Code's billing-header block and `metadata` (which
// it does not record) are absent. The pairs carry that request (schema v2), in chat form and on the wire.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, tempDir } from '../helpers/cli.js';
import { type ModelServer, type RecordedRequest, startModelServer } from '../helpers/model-server.js';
import { claudeFixture as fixture, loggedRequests } from '../helpers/requests-log.js';

interface Logged {
  kind: 'scripted' | 'compaction';
  label: string;
  headers: Record<string, string>;
  body: Record<string, unknown> & {
    system: { text: string }[];
    messages: unknown[];
    tools: { name: string }[];
  };
}

const logged: Logged[] = loggedRequests<Logged['body']>();
const scripted = logged.filter((entry) => entry.kind === 'scripted');

interface PairLine {
  schema: string;
  session: string;
  turn: number;
  messages: { role: string; content: unknown; tool_call_id?: string }[];
  tools: { function: { name: string } }[];
  sources: { system: string; tools: string };
  tool_errors: string[];
  wire: { api: string; source: string; body: Record<string, unknown>; betas: string[] };
}

let dir: ReturnType<typeof tempDir>;
let server: ModelServer;
let received: RecordedRequest[];
let pairs: PairLine[];
let exitCode: number;
let stderr: string;

beforeAll(async () => {
  dir = tempDir('claude-code-wire-');
  const db = join(dir.path, 'store.db');
  expect((await run(['ingest', join(fixture, 'projects'), '--db', db])).exitCode).toBe(0);
  server = await startModelServer({ responders: [() => ({ text: 'ok' })] });
  const out = join(dir.path, 'pairs.jsonl');
  const result = await run(
    [
      'replay',
      '--all',
      '--db',
      db,
      '--model',
      'anthropic:claude-replay-test',
      '--stream',
      '--out',
      out,
      '--json',
    ],
    { env: { ANTHROPIC_BASE_URL: server.baseURL.replace(/\/v1$/, ''), ANTHROPIC_API_KEY: 'sk-ant-replay' } },
  );
  exitCode = result.exitCode;
  stderr = result.stderr;
  received = server.chatRequests();
  pairs = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PairLine);
}, 120_000);

afterAll(async () => {
  await server?.close();
  dir?.remove();
});

/** What Claude Code sent that the transcript does not hold, and what a replay sets itself, taken out. */
function comparable(body: Record<string, unknown>, logged: boolean): Record<string, unknown> {
  const { model: _model, stream: _stream, metadata: _metadata, system, ...rest } = body;
  const blocks = system as { text?: string }[];
  if (logged) expect(blocks[0]?.text).toMatch(/^x-anthropic-billing-header: /);
  return { ...rest, system: logged ? blocks.slice(1) : blocks };
}

const key = (body: Record<string, unknown>) => JSON.stringify(body.messages);

describe('replay --model anthropic: of Claude Code 2.1.328 sessions', () => {
  it('asks every recorded turn once, and succeeds', () => {
    expect(exitCode, stderr).toBe(0);
    expect(received).toHaveLength(scripted.length);
    expect(pairs).toHaveLength(scripted.length);
  });

  it('sends each turn the request the model received: system, tools, messages, params and betas', () => {
    const byMessages = new Map(scripted.map((entry) => [key(entry.body), entry]));
    const matched = new Set<string>();
    for (const request of received) {
      const body = request.body as Record<string, unknown>;
      const original = byMessages.get(key(body));
      expect(original, 'a logged request has these messages').toBeDefined();
      const entry = original as Logged;
      matched.add(entry.label);
      expect(comparable(body, false)).toEqual(comparable(entry.body, true));
      expect(body.model).toBe('claude-replay-test');
      expect(body.stream).toBe(true);
      expect(request.headers['anthropic-beta']).toBe(entry.headers['anthropic-beta']);
      expect(request.path).toBe('/v1/messages');
    }
    // Every logged model turn was sent, none twice.
    expect(matched.size).toBe(scripted.length);
  });

  it('pairs are v2 and carry the recorded prompt and tools, with errors marked and the wire body', () => {
    const bodies = new Map(scripted.map((entry) => [key(entry.body), entry]));
    let errors = 0;
    for (const pair of pairs) {
      expect(pair.schema).toBe('replay-history.pair/v2');
      expect(pair.sources).toEqual({ system: 'recorded', tools: 'recorded' });
      expect(pair.wire.api).toBe('anthropic-messages');
      expect(pair.wire.source).toBe('recorded');
      const entry = bodies.get(JSON.stringify(pair.wire.body.messages)) as Logged;
      expect(entry, `${pair.session} turn ${pair.turn}`).toBeDefined();
      // Chat form: the recorded system text first, the offered tools by name, in order.
      expect(pair.messages[0]).toEqual({
        role: 'system',
        content: entry.body.system
          .slice(1)
          .map((block) => block.text)
          .join(''),
      });
      expect(pair.tools.map((tool) => tool.function.name)).toEqual(entry.body.tools.map((tool) => tool.name));
      // Every tool_result the model saw as an error is named in tool_errors, and only those.
      const flagged = (entry.body.messages as { content: unknown }[]).flatMap((message) =>
        Array.isArray(message.content)
          ? (message.content as { type: string; is_error?: boolean; tool_use_id?: string }[])
              .filter((block) => block.type === 'tool_result' && block.is_error === true)
              .map((block) => block.tool_use_id)
          : [],
      );
      expect(pair.tool_errors).toEqual(flagged);
      errors += flagged.length;
      // Harness text is in the context as sent: the mid-conversation system messages too.
      const systems = (entry.body.messages as { role: string }[]).filter((m) => m.role === 'system').length;
      expect(pair.messages.filter((m) => m.role === 'system')).toHaveLength(systems + 1);
    }
    // The Read of a missing file (A1) failed, and every later turn of that session saw it.
    expect(errors).toBeGreaterThan(0);
    // An Explore-style sub-agent was offered fewer tools than its parent.
    const sizes = new Set(pairs.map((pair) => pair.tools.length));
    expect(sizes.size).toBeGreaterThan(1);
  });
});
