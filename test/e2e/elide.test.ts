// --elide-repeats through the real binary: forced replay with the recorded provider, free replay against a
// scripted model, and stats --elision, all on one hand-made Claude Code session.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { elisionMarker, truncationNote } from '../../src/replay/elide.js';
import { run, tempDir } from '../helpers/cli.js';
import { type ModelServer, type ScriptedReply, startModelServer } from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

const cwd = '/home/ada/app';
const sessionId = 'eeeeeeee-0000-4000-8000-000000000006';

/** 40 KiB of a file as Read shows it, numbered lines. */
const big = (() => {
  let out = '';
  for (let n = 1; out.length < 40 * 1024; n++)
    out += `${String(n).padStart(6)}\texport const value${n} = ${n};\n`;
  return out.slice(0, 40 * 1024);
})();
/** Long enough that a marker would be shorter, so only the rules keep these whole. */
const bashOutput = `On branch main\nnothing to commit, working tree clean\n${'M src/file.ts\n'.repeat(30)}`;
const errorOutput = `<tool_use_error>File does not exist. Current working directory: ${cwd}. ${'Did you mean src/index.ts? '.repeat(8)}</tool_use_error>`;
const todoOutput =
  'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. ' +
  'Please proceed with the current tasks if applicable\n\n<system-reminder>\nYour todo list has changed. ' +
  'Here are the latest contents of your todo list:\n\n[{"content":"Fix the build","status":"in_progress",' +
  '"activeForm":"Fixing the build"}]. Continue on with the tasks at hand if applicable.\n</system-reminder>';
const todos = {
  todos: [{ content: 'Fix the build', status: 'in_progress', activeForm: 'Fixing the build' }],
};
const read = { file_path: `${cwd}/src/big.ts`, limit: 2000 };

/** The recorded steps: three identical 40 KiB reads, a Bash repeat, an error repeat, a TodoWrite repeat. */
const steps = [
  { calls: [{ id: 'toolu_read1', name: 'Read', input: read, result: big }] },
  { calls: [{ id: 'toolu_read2', name: 'Read', input: read, result: big }] },
  // The same arguments in another key order: the same call.
  {
    calls: [
      { id: 'toolu_read3', name: 'Read', input: { limit: 2000, file_path: read.file_path }, result: big },
    ],
  },
  { calls: [{ id: 'toolu_bash1', name: 'Bash', input: { command: 'git status' }, result: bashOutput }] },
  { calls: [{ id: 'toolu_bash2', name: 'Bash', input: { command: 'git status' }, result: bashOutput }] },
  {
    calls: [
      {
        id: 'toolu_err1',
        name: 'Read',
        input: { file_path: `${cwd}/nope.ts` },
        result: errorOutput,
        isError: true,
      },
    ],
  },
  {
    calls: [
      {
        id: 'toolu_err2',
        name: 'Read',
        input: { file_path: `${cwd}/nope.ts` },
        result: errorOutput,
        isError: true,
      },
    ],
  },
  { calls: [{ id: 'toolu_todo1', name: 'TodoWrite', input: todos, result: todoOutput }] },
  { calls: [{ id: 'toolu_todo2', name: 'TodoWrite', input: todos, result: todoOutput }] },
];
/** Turns: one per step, and the final answer. */
const turnCount = steps.length + 1;
/** The recorded output of every call, by id. */
const recorded = new Map(steps.flatMap((step) => step.calls.map((call) => [call.id, call.result])));

let dir: ReturnType<typeof tempDir>;
let logs: string;
let db: string;
let env: Record<string, string>;
let server: ModelServer | undefined;

beforeEach(() => {
  dir = tempDir();
  logs = join(dir.path, 'logs');
  db = join(dir.path, 'replay.db');
  mkdirSync(logs);
  mkdirSync(join(dir.path, 'data'));
  mkdirSync(join(dir.path, 'cache'));
  // Nothing of the user's own data or cache is read or written.
  env = { XDG_DATA_HOME: join(dir.path, 'data'), XDG_CACHE_HOME: join(dir.path, 'cache') };
  writeTranscript(join(logs, `${sessionId}.jsonl`), {
    sessionId,
    cwd,
    prompt: 'Fix the build.',
    steps,
    answer: 'Fixed.',
  });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  dir.remove();
});

interface ChatMessage {
  role: string;
  content?: string | null;
  tool_call_id?: string;
}
interface PairLine {
  turn: number;
  messages: ChatMessage[];
}

const pairs = (out: string): PairLine[] =>
  readFileSync(out, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as PairLine)
    .sort((a, b) => a.turn - b.turn);

/** Forced replay with the recorded provider into its own pairs file. */
async function forced(name: string, args: string[] = []) {
  const out = join(dir.path, `${name}.jsonl`);
  const result = await run(['replay', logs, '--db', db, '--out', out, '--json', ...args], { env });
  expect(result.stderr).not.toMatch(/error/i);
  expect(result.exitCode).toBe(0);
  return { report: JSON.parse(result.stdout), pairs: pairs(out), out };
}

/** Tool messages of a context whose content is not the recorded output of their call. */
const changed = (messages: ChatMessage[]) =>
  messages
    .filter(
      (message) => message.role === 'tool' && message.content !== recorded.get(message.tool_call_id ?? ''),
    )
    .map((message) => [message.tool_call_id, message.content]);

describe('replay --elide-repeats, forced mode', () => {
  it('the session is built so that only the rules keep the repeats whole: each is longer than its marker', () => {
    for (const step of steps)
      for (const call of step.calls)
        expect(Buffer.byteLength(call.result)).toBeGreaterThan(Buffer.byteLength(elisionMarker(call.id)));
  });

  it('shows the marker for the read-only repeats only, counts them, and changes nothing else', async () => {
    const plain = await forced('plain');
    const elided = await forced('elided', ['--elide-repeats']);
    expect(plain.pairs).toHaveLength(turnCount);
    expect(elided.pairs).toHaveLength(turnCount);

    // Without the flag the contexts are as recorded: every tool message holds its recorded output.
    for (const pair of plain.pairs) expect(changed(pair.messages)).toEqual([]);
    expect(plain.report.elision).toEqual({ resultsElided: 0, resultsCut: 0, bytesSaved: 0, reasks: 0 });
    expect(plain.report.options.shown).toBeUndefined();

    // With it: the second and third reads are markers pointing at the first; Bash, the errors, TodoWrite whole.
    const marker = elisionMarker('toolu_read1');
    for (const pair of elided.pairs) {
      const expected = [
        ...(pair.turn >= 3 ? [['toolu_read2', marker]] : []),
        ...(pair.turn >= 4 ? [['toolu_read3', marker]] : []),
      ];
      expect(changed(pair.messages)).toEqual(expected);
    }
    // Apart from the markers, byte for byte the same contexts.
    const restored = elided.pairs.map((pair) =>
      pair.messages.map((message) =>
        message.role === 'tool' && message.content === marker
          ? { ...message, content: recorded.get(message.tool_call_id ?? '') }
          : message,
      ),
    );
    expect(JSON.stringify(restored)).toBe(JSON.stringify(plain.pairs.map((pair) => pair.messages)));

    // Turn 3's context has one marker, turns 4…10 two each.
    const markers = 1 + 2 * (turnCount - 3);
    const saving = big.length - Buffer.byteLength(marker);
    expect(elided.report.elision).toEqual({
      resultsElided: markers,
      resultsCut: 0,
      bytesSaved: markers * saving,
      reasks: 0,
    });
    expect(elided.report.options.shown).toEqual({ elideRepeats: true, extraTools: [] });
    // The recorded provider answers as the original did, markers or not.
    expect(elided.report).toMatchObject({ status: 'done', turnsDone: turnCount, turnsFailed: 0 });

    // runs --json carries the same figures; the human report has an elided line.
    const runs = await run(['runs', '--db', db, '--json'], { env });
    const listed = JSON.parse(runs.stdout) as { id: string; elision: unknown }[];
    expect(listed.find((entry) => entry.id === elided.report.id)?.elision).toEqual(elided.report.elision);
    const human = await run(['runs', elided.report.id, '--db', db], { env });
    expect(human.stdout).toMatch(
      new RegExp(`elided +${markers} repeated result\\(s\\) across the contexts sent`),
    );
    const plainHuman = await run(['runs', plain.report.id, '--db', db], { env });
    expect(plainHuman.stdout).not.toContain('elided');
  });

  it('--elide-tool Bash makes the Bash repeat elided too', async () => {
    const { report, pairs: written } = await forced('bash', ['--elide-repeats', '--elide-tool', 'Bash']);
    const last = written.at(-1);
    expect(changed(last?.messages ?? [])).toEqual([
      ['toolu_read2', elisionMarker('toolu_read1')],
      ['toolu_read3', elisionMarker('toolu_read1')],
      ['toolu_bash2', elisionMarker('toolu_bash1')],
    ]);
    // toolu_bash2 is in the contexts of turns 6…10.
    const reads = 1 + 2 * (turnCount - 3);
    const bashes = turnCount - 5;
    expect(report.elision).toMatchObject({
      resultsElided: reads + bashes,
      bytesSaved:
        reads * (big.length - Buffer.byteLength(elisionMarker('toolu_read1'))) +
        bashes * (bashOutput.length - Buffer.byteLength(elisionMarker('toolu_bash1'))),
    });
    expect(report.options.shown).toEqual({ elideRepeats: true, extraTools: ['Bash'] });
  });

  it('--elide-tool without --elide-repeats is refused', async () => {
    const result = await run(['replay', logs, '--db', db, '--elide-tool', 'Bash'], { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--elide-tool only makes sense with --elide-repeats');
  });

  it('--max-result-bytes cuts the 40 KiB reads with the note, and a cut read is then not elided', async () => {
    const max = 4096;
    const { report, pairs: written } = await forced('cut', [
      '--elide-repeats',
      '--max-result-bytes',
      String(max),
    ]);
    const kept = big.slice(0, max - Buffer.byteLength(truncationNote(0, big.length)));
    const cut = kept + truncationNote(kept.length, big.length);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(max);
    const last = written.at(-1);
    expect(changed(last?.messages ?? [])).toEqual([
      ['toolu_read1', cut],
      ['toolu_read2', cut],
      ['toolu_read3', cut],
    ]);
    expect(cut).toContain(
      `[… output cut by replay-history: ${big.length - kept.length} of ${big.length} bytes not shown]`,
    );
    // Nothing elided; the saving is the cut: read1 is in turns 2…10, read2 in 3…10, read3 in 4…10.
    const cuts = turnCount - 1 + (turnCount - 2) + (turnCount - 3);
    expect(report.elision).toEqual({
      resultsElided: 0,
      resultsCut: cuts,
      bytesSaved: cuts * (big.length - Buffer.byteLength(cut)),
      reasks: 0,
    });
  });
});

describe('replay --elide-repeats, free mode', () => {
  it('shows the model a marker for a repeat, and counts the re-ask when it asks again', async () => {
    const readCall: ScriptedReply = { toolCalls: [{ name: 'Read', arguments: read }] };
    server = await startModelServer({
      turns: [readCall, readCall, readCall, { text: 'Fixed.' }],
    });
    const out = join(dir.path, 'free.jsonl');
    const result = await run(
      [
        'replay',
        logs,
        '--mode',
        'free',
        '--model',
        'openai:scripted',
        '--base-url',
        server.baseURL,
        '--db',
        db,
        '--out',
        out,
        '--json',
        '--elide-repeats',
      ],
      { env },
    );
    expect(result.exitCode).toBe(0);
    const told = (index: number) =>
      (server?.chatRequests()[index]?.body?.messages ?? [])
        .filter((message) => message.role === 'tool')
        .map((message) => message.content);
    // The model's own call ids (call_1…) are what the marker names.
    expect(told(1)).toEqual([big]);
    expect(told(2)).toEqual([big, elisionMarker('call_1')]);
    expect(told(3)).toEqual([big, elisionMarker('call_1'), elisionMarker('call_1')]);
    const report = JSON.parse(result.stdout);
    // The third Read came after the model had been shown the second as a marker: one re-ask. Markers in the
    // contexts sent: one in the third request, two in the fourth.
    expect(report.elision).toEqual({
      resultsElided: 3,
      resultsCut: 0,
      bytesSaved: 3 * (big.length - Buffer.byteLength(elisionMarker('call_1'))),
      reasks: 1,
    });
    const runs = JSON.parse((await run(['runs', '--db', db, '--json'], { env })).stdout);
    expect(runs[0].elision.reasks).toBeGreaterThanOrEqual(1);
    expect(runs[0].elision).toEqual(report.elision);
    const human = await run(['runs', report.id, '--db', db], { env });
    expect(human.stdout).toContain('the model asked again 1 time(s) for an elided result');
  });
});

describe('stats --elision', () => {
  it('per tool: Read elided twice, bytes and tokens after under before; Bash, errors and TodoWrite kept', async () => {
    const result = await run(['stats', '--elision', logs, '--db', db, '--json'], { env });
    expect(result.exitCode).toBe(0);
    const stats = JSON.parse(result.stdout);
    expect(stats.sessions).toBe(1);
    const marker = Buffer.byteLength(elisionMarker('toolu_read1'));
    const errors = 2 * Buffer.byteLength(errorOutput);
    const readRow = stats.perTool.Read;
    expect(readRow).toMatchObject({
      results: 5,
      elided: 2,
      truncated: 0,
      bytesBefore: 3 * big.length + errors,
      bytesAfter: big.length + 2 * marker + errors,
    });
    expect(readRow.tokensAfter).toBeLessThan(readRow.tokensBefore);
    expect(readRow.tokensAfter).toBeGreaterThan(0);
    for (const tool of ['Bash', 'TodoWrite']) {
      expect(stats.perTool[tool]).toMatchObject({ results: 2, elided: 0 });
      expect(stats.perTool[tool].bytesAfter).toBe(stats.perTool[tool].bytesBefore);
      expect(stats.perTool[tool].tokensAfter).toBe(stats.perTool[tool].tokensBefore);
    }
    expect(stats.total).toMatchObject({ results: 9, elided: 2 });
    expect(stats.acrossContexts.turns).toBe(turnCount);
    expect(stats.acrossContexts.bytesBefore - stats.acrossContexts.bytesAfter).toBe(
      (1 + 2 * (turnCount - 3)) * (big.length - marker),
    );

    // The human table, with --elide-tool counting Bash too.
    const human = await run(['stats', '--elision', logs, '--db', db, '--elide-tool', 'Bash'], { env });
    expect(human.exitCode).toBe(0);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^TOOL +RESULTS +ELIDED +BYTES +TOKENS +SAVED/);
    expect(lines.find((row) => row.startsWith('Read '))).toMatch(/^Read +5 +2 +/);
    expect(lines.find((row) => row.startsWith('Bash '))).toMatch(/^Bash +2 +1 +/);
    expect(lines.find((row) => row.startsWith('TodoWrite '))).toMatch(/^TodoWrite +2 +0 +/);
    expect(lines.find((row) => row.startsWith('all tools '))).toMatch(/^all tools +9 +3 +/);
    expect(human.stdout).toContain(
      `1 session(s); across the ${turnCount} turn contexts a forced replay sends`,
    );
  });

  it('--max-result-bytes adds a CUT column, and the cut reads are not elided', async () => {
    const result = await run(
      ['stats', '--elision', logs, '--db', db, '--max-result-bytes', '4096', '--json'],
      {
        env,
      },
    );
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).perTool.Read).toMatchObject({ results: 5, elided: 0, truncated: 3 });
    const human = await run(['stats', '--elision', logs, '--db', db, '--max-result-bytes', '4096'], { env });
    expect(human.stdout.split('\n')[0]).toMatch(/^TOOL +RESULTS +ELIDED +CUT +BYTES/);
    expect(human.stdout.split('\n').find((row) => row.startsWith('Read '))).toMatch(/^Read +5 +0 +3 +/);
  });

  it('without a report chosen it runs --elision, the only report', async () => {
    const result = await run(['stats', logs, '--db', db], { env });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^TOOL +RESULTS +ELIDED +BYTES/);
    expect(result.stdout).toBe((await run(['stats', '--elision', logs, '--db', db], { env })).stdout);
  });
});
