// The real Gemini CLI 0.61.0 sessions through the CLI: a resume's regenerated session context is shown as
// harness context replacing its earlier copy (not as a compaction summary), and it is harness text in
// exports — left out unless --include-injected — while the compression's summary stays; and their turns asked
// again of a Gemini-API model (`gemini:MODEL`), streamed or not.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';
import { startModelServer } from '../helpers/model-server.js';

const chats = join(root, 'test/fixtures/real/gemini-cli-0.61.0/home/.gemini/tmp');
let dir: ReturnType<typeof tempDir>;
let db: string;
let resumed: string;

beforeAll(async () => {
  dir = tempDir('gemini-e2e-');
  db = join(dir.path, 'store.db');
  expect((await run(['ingest', chats, '--db', db])).exitCode).toBe(0);
  const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
    id: string;
    agent: string;
    sourceId: string;
  }[];
  resumed = listed.find((s) => s.agent === 'gemini' && s.sourceId.startsWith('9c1bacd1'))?.id ?? '';
  expect(resumed).not.toBe('');
});
afterAll(() => dir?.remove());

describe('a resumed Gemini CLI session', () => {
  it('shows the regenerated session context as harness context replacing its copy, the compression as a summary', async () => {
    const shown = await run(['show', resumed, '--db', db]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/session_context attachment, replaces the earlier context/);
    expect(shown.stdout).toContain('[harness context that replaces its earlier copy');
    expect(shown.stdout).toMatch(/injected, compaction summary/);
  });

  it('exports the session context only with --include-injected; the summary always', async () => {
    const plain = join(dir.path, 'plain.jsonl');
    const all = join(dir.path, 'all.jsonl');
    expect((await run(['export', '--format', 'openai', '--db', db, '--out', plain])).exitCode).toBe(0);
    expect(
      (await run(['export', '--format', 'openai', '--include-injected', '--db', db, '--out', all])).exitCode,
    ).toBe(0);
    expect(readFileSync(plain, 'utf8')).not.toContain('<session_context>');
    expect(readFileSync(all, 'utf8')).toContain('<session_context>');
    expect(readFileSync(plain, 'utf8')).toContain('<state_snapshot>');
  });
});

describe('replay --model gemini:MODEL', () => {
  it('asks each turn in Gemini’s own form (contents, functionCall/functionResponse, declarations) and reads the answer', async () => {
    const server = await startModelServer({
      responders: [
        () => ({
          reasoning: 'Looking.',
          text: 'Reading it.',
          toolCalls: [{ name: 'read_file', arguments: { file_path: 'notes.txt' } }],
        }),
      ],
    });
    try {
      for (const stream of [false, true]) {
        const out = join(dir.path, `gemini-${stream}.jsonl`);
        const replayed = await run(
          [
            'replay',
            resumed,
            '--model',
            'gemini:scripted-gemini',
            '--base-url',
            server.baseURL.replace(/\/v1$/, ''),
            '--db',
            db,
            '--out',
            out,
            ...(stream ? ['--stream'] : []),
          ],
          { env: { GEMINI_API_KEY: 'gemini-key-for-tests' } },
        );
        expect(replayed.exitCode, replayed.stderr).toBe(0);
        const pairs = readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line));
        expect(pairs.length).toBeGreaterThan(3);
        for (const pair of pairs) {
          expect(pair.completion.content).toBe('Reading it.');
          expect(pair.completion.reasoning_content).toBe('Looking.');
          expect(
            pair.completion.tool_calls.map((c: { function: { name: string } }) => c.function.name),
          ).toEqual(['read_file']);
        }
      }
      const asked = server.chatRequests();
      expect(asked.map((r) => r.path)).toContain('/v1beta/models/scripted-gemini:generateContent');
      expect(asked.map((r) => r.path)).toContain('/v1beta/models/scripted-gemini:streamGenerateContent');
      for (const request of asked) {
        expect(request.headers['x-goog-api-key']).toBe('gemini-key-for-tests');
        const body = request.body as unknown as {
          contents: { role: string; parts: Record<string, { name?: string }>[] }[];
          systemInstruction?: { parts: { text: string }[] };
          tools: { functionDeclarations: { name: string; parametersJsonSchema: unknown }[] }[];
        };
        expect(body.systemInstruction?.parts[0]?.text.length).toBeGreaterThan(0);
        expect(body.tools[0]?.functionDeclarations.map((d) => d.name)).toContain('run_shell_command');
        // Roles alternate, and each functionResponse is named after the call it answers.
        const roles = body.contents.map((c) => c.role);
        expect(roles.every((role, i) => i === 0 || role !== roles[i - 1])).toBe(true);
        const called: string[] = [];
        for (const content of body.contents)
          for (const part of content.parts) {
            if (part.functionCall?.name) called.push(part.functionCall.name);
            if (part.functionResponse) expect(called).toContain(part.functionResponse.name);
          }
      }
    } finally {
      await server.close();
    }
  });
});
