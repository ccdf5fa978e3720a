// --elide-repeats as a pure transform: hand-built contexts in, what the model is shown out. One `it` per rule of
// the issue (and per sub-rule of rule 6); every test also checks the input messages were left as they were.
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/cli/memory.js';
import type { Message, Part, Session, ToolCall, ToolResult } from '../../src/model/session.js';
import { splitTurns } from '../../src/model/turns.js';
import { isReadOnly, toolsFor } from '../../src/replay/catalogue/index.js';
import {
  callKey,
  type ElideOptions,
  Elider,
  elideOptions,
  elideRepeats,
  elisionMarker,
  type ResultFate,
  savings,
  showThrough,
  truncationNote,
} from '../../src/replay/elide.js';
import { addSession, emptyFigures, totals } from '../../src/replay/elision-stats.js';

// ---------------------------------------------------------------------------------------------------------------
// Building contexts

let line = 0;
const source = () => ({ file: 'mem.jsonl', line: ++line });
const user = (text: string, extra: Partial<Message> = {}): Message => ({
  role: 'user',
  parts: [{ type: 'text', text }],
  source: source(),
  ...extra,
});
const call = (id: string, name: string, input: unknown): ToolCall => ({ type: 'tool_call', id, name, input });
const result = (
  callId: string,
  name: string,
  output: string,
  extra: Partial<ToolResult> = {},
): ToolResult => ({
  type: 'tool_result',
  callId,
  name,
  output,
  isError: false,
  ...extra,
});
const assistant = (parts: Part[], extra: Partial<Message> = {}): Message => ({
  role: 'assistant',
  parts,
  source: source(),
  ...extra,
});
const tool = (results: ToolResult[], extra: Partial<Message> = {}): Message => ({
  role: 'tool',
  parts: results,
  source: source(),
  ...extra,
});
/** One model turn calling one tool, and its recorded result. */
const exchange = (
  id: string,
  name: string,
  input: unknown,
  output: string,
  extra: Partial<ToolResult> = {},
): Message[] => [assistant([call(id, name, input)]), tool([result(id, name, output, extra)])];

/** ASCII text of exactly `bytes` bytes, different per seed, in lines like a Read result. */
const text = (bytes: number, seed = 'a'): string => {
  let out = '';
  for (let n = 1; out.length < bytes; n++) out += `${String(n).padStart(6)}\t${seed} line ${n}\n`;
  return out.slice(0, bytes);
};
const bytesOf = (value: string) => Buffer.byteLength(value, 'utf8');

// ---------------------------------------------------------------------------------------------------------------
// Running the transform, and checking it left its input alone

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** elideRepeats over a frozen context (a write would throw), checked equal to a copy taken before. */
function elide(context: Message[], options: ElideOptions) {
  const before = structuredClone(context);
  const out = elideRepeats(deepFreeze(context), options);
  expect(context).toEqual(before);
  // Messages with nothing changed in them are passed through as the same objects.
  out.messages.forEach((message, index) => {
    const changed = message.parts.some((part, at) => part !== context[index]?.parts[at]);
    if (!changed) expect(message).toBe(context[index]);
  });
  expect(out.messages).toHaveLength(context.length);
  return { ...out, outputs: outputsOf(out.messages) };
}

const outputsOf = (messages: readonly Message[]) =>
  messages.flatMap((message) =>
    message.parts.flatMap((part) => (part.type === 'tool_result' ? [part.output] : [])),
  );

const shown = (callId: string, name: string, output: string): ResultFate => ({
  callId,
  name,
  fate: 'shown',
  bytes: bytesOf(output),
  shownBytes: bytesOf(output),
});
const elided = (callId: string, name: string, output: string, sameAs: string): ResultFate => ({
  callId,
  name,
  fate: 'elided',
  bytes: bytesOf(output),
  shownBytes: bytesOf(elisionMarker(sameAs)),
  sameAs,
});

/** Claude Code's own options: the catalogue's read-only allow-list, nothing added. */
const claude = elideOptions('claude-code', { elideRepeats: true, extraTools: [] }) as ElideOptions;
/** Every tool read-only, to test the rules that do not depend on the allow-list. */
const anyTool: ElideOptions = { readOnly: () => true };

const path = '/home/ada/app/src/index.ts';
const file = text(600);

describe('elisionMarker', () => {
  it('says the tool ran again and returned identical output, naming the earlier call', () => {
    const marker = elisionMarker('toolu_01');
    expect(marker).toContain('ran again');
    expect(marker).toContain('identical');
    expect(marker).toContain('toolu_01');
    expect(marker).not.toContain('\n');
  });
});

describe('rule 1: composition with truncation of large results', () => {
  const big = text(40 * 1024);
  const reads = (output: string) => [
    user('read it three times'),
    ...exchange('r1', 'Read', { file_path: path }, output),
    ...exchange('r2', 'Read', { file_path: path }, output),
    ...exchange('r3', 'Read', { file_path: path }, output),
  ];

  it('elides a 40 KiB identical read: elision is not limited to small results', () => {
    for (const options of [
      claude,
      { ...claude, maxResultBytes: 64 * 1024 },
      { ...claude, maxResultBytes: 40960 },
    ]) {
      const out = elide(reads(big), options);
      expect(out.outputs).toEqual([big, elisionMarker('r1'), elisionMarker('r1')]);
      expect(out.fates).toEqual([
        shown('r1', 'Read', big),
        elided('r2', 'Read', big, 'r1'),
        elided('r3', 'Read', big, 'r1'),
      ]);
      expect(savings(out.fates)).toEqual({
        elided: 2,
        truncated: 0,
        bytesSaved: 2 * (40960 - bytesOf(elisionMarker('r1'))),
      });
    }
  });

  it('cuts a result over --max-result-bytes first, with the note, and then never elides it', () => {
    const max = 4096;
    const kept = big.slice(0, max - bytesOf(truncationNote(0, 40960)));
    const cut = kept + truncationNote(bytesOf(kept), 40960);
    expect(bytesOf(cut)).toBe(max);
    expect(cut).toContain(`${40960 - bytesOf(kept)} of 40960 bytes not shown`);
    const small = text(900, 'small');
    const out = elide(
      [
        ...reads(big),
        // The limit does not turn elision off: a repeat under it is still elided.
        ...exchange('s1', 'Read', { file_path: '/small' }, small),
        ...exchange('s2', 'Read', { file_path: '/small' }, small),
      ],
      { ...claude, maxResultBytes: max },
    );
    expect(out.outputs).toEqual([cut, cut, cut, small, elisionMarker('s1')]);
    const truncated = (callId: string): ResultFate => ({
      callId,
      name: 'Read',
      fate: 'truncated',
      bytes: 40960,
      shownBytes: max,
    });
    expect(out.fates).toEqual([
      truncated('r1'),
      truncated('r2'),
      truncated('r3'),
      shown('s1', 'Read', small),
      elided('s2', 'Read', small, 's1'),
    ]);
    expect(savings(out.fates)).toEqual({
      elided: 1,
      truncated: 3,
      bytesSaved: 3 * (40960 - max) + 900 - bytesOf(elisionMarker('s1')),
    });
  });

  it('cuts between characters, never inside one', () => {
    const wide = 'é'.repeat(3000); // 6000 bytes, two per character
    const max = 1001; // an odd limit, so a byte cut would split a character
    const out = elide(exchange('w1', 'Read', { file_path: '/wide' }, wide), {
      ...claude,
      maxResultBytes: max,
    });
    const [shownText] = out.outputs as string[];
    expect(shownText).not.toContain('\uFFFD');
    expect(bytesOf(shownText ?? '')).toBeLessThanOrEqual(max);
    expect(shownText?.startsWith('é'.repeat(400))).toBe(true);
    expect(shownText).toContain('bytes not shown]');
  });

  it('shows a result the agent cut or cleared as it is, never as a marker, and it ends the baseline', () => {
    const padding = text(400, 'head');
    const agentCuts = [
      // Claude Code's cut in the middle of long Bash output.
      `${padding}\n... [2937 characters truncated] ...\ntail`,
      // Codex's.
      `${padding}\n…1200 tokens truncated…\ntail`,
      // opencode's.
      `${padding}\nThe tool call succeeded but the output was truncated. Full output saved to /tmp/x`,
    ];
    for (const output of agentCuts) {
      const out = elide(
        [
          ...exchange('c0', 'Bash', { command: 'make' }, file),
          ...exchange('c1', 'Bash', { command: 'make' }, output),
          ...exchange('c2', 'Bash', { command: 'make' }, output),
          // The model no longer has a whole payload for this call as its latest: a full one is shown in full.
          ...exchange('c3', 'Bash', { command: 'make' }, file),
          ...exchange('c4', 'Bash', { command: 'make' }, file),
        ],
        anyTool,
      );
      expect(out.outputs).toEqual([file, output, output, file, elisionMarker('c3')]);
      expect(out.fates.map((fate) => fate.fate)).toEqual(['shown', 'shown', 'shown', 'shown', 'elided']);
    }
    // opencode's pruning leaves this in place of an old output: never a marker (and never a baseline).
    const cleared = '[Old tool result content cleared]';
    const out = elide(
      [
        ...exchange('p1', 'Read', { file_path: path }, cleared),
        ...exchange('p2', 'Read', { file_path: path }, cleared),
      ],
      anyTool,
    );
    expect(out.outputs).toEqual([cleared, cleared]);
  });
});

describe('rule 2: what the model no longer has is not "already seen"', () => {
  it('after a compaction nothing before it is the baseline for a marker after it', () => {
    const out = elide(
      [
        user('go'),
        ...exchange('r1', 'Read', { file_path: path }, file),
        ...exchange('r2', 'Read', { file_path: path }, file),
        user('Summary of the conversation so far: read the file.', { compaction: true }),
        ...exchange('r3', 'Read', { file_path: path }, file),
        ...exchange('r4', 'Read', { file_path: path }, file),
      ],
      claude,
    );
    expect(out.outputs).toEqual([file, elisionMarker('r1'), file, elisionMarker('r3')]);
    expect(out.fates).toEqual([
      shown('r1', 'Read', file),
      elided('r2', 'Read', file, 'r1'),
      shown('r3', 'Read', file),
      elided('r4', 'Read', file, 'r3'),
    ]);
  });

  it('in the contexts turns() builds: after a compaction only the summary and its preserved tail can be baselines', () => {
    const messages: Message[] = [
      user('go', { nativeId: 'u0' }),
      assistant([call('r0', 'Read', { file_path: '/a' })], { nativeId: 'a0' }),
      tool([result('r0', 'Read', file)], { nativeId: 't0' }),
      assistant([call('r1', 'Read', { file_path: path })], { nativeId: 'a1' }),
      tool([result('r1', 'Read', file)], { nativeId: 't1' }),
      // The summary replaces everything before it except the last exchange, re-anchored after it.
      user('Summary: read two files.', { nativeId: 's', compaction: true, preserved: ['a1', 't1'] }),
      assistant([call('r2', 'Read', { file_path: '/a' })], { nativeId: 'a2' }),
      tool([result('r2', 'Read', file)], { nativeId: 't2' }),
      assistant([call('r3', 'Read', { file_path: path })], { nativeId: 'a3' }),
      tool([result('r3', 'Read', file)], { nativeId: 't3' }),
      assistant([{ type: 'text', text: 'done' }], { nativeId: 'a4' }),
    ];
    const last = splitTurns(messages).at(-1);
    expect(last?.context.map((message) => message.nativeId)).toEqual([
      's',
      'a1',
      't1',
      'a2',
      't2',
      'a3',
      't3',
    ]);
    const out = elide(last?.context ?? [], claude);
    // r0 went with the compaction: r2 is shown in full. r1 is still in front of the model: r3 points at it.
    expect(out.outputs).toEqual([file, file, elisionMarker('r1')]);
    expect(out.fates).toEqual([
      shown('r1', 'Read', file),
      shown('r2', 'Read', file),
      elided('r3', 'Read', file, 'r1'),
    ]);
  });

  it('an older result the agent cleared is no longer "already seen": the next copy is shown in full', () => {
    const cleared = '[Old tool result content cleared]';
    // Turn n: both results whole in the context, the second elided.
    const early = elide(
      [
        ...exchange('r1', 'Read', { file_path: path }, file),
        ...exchange('r2', 'Read', { file_path: path }, file),
      ],
      claude,
    );
    expect(early.outputs).toEqual([file, elisionMarker('r1')]);
    // A later turn, after opencode pruned r1: r2 must now be shown whole, and becomes the baseline.
    const late = elide(
      [
        ...exchange('r1', 'Read', { file_path: path }, cleared),
        ...exchange('r2', 'Read', { file_path: path }, file),
        ...exchange('r3', 'Read', { file_path: path }, file),
      ],
      claude,
    );
    expect(late.outputs).toEqual([cleared, file, elisionMarker('r2')]);
    expect(late.fates).toEqual([
      shown('r1', 'Read', cleared),
      shown('r2', 'Read', file),
      elided('r3', 'Read', file, 'r2'),
    ]);
  });

  it('an older result that was cut (by our limit) is no longer "already seen": the next whole copy is shown', () => {
    const long = text(5000, 'long');
    const out = elide(
      [
        ...exchange('r1', 'Read', { file_path: path }, long),
        // The file shrank back under the limit, then was read again unchanged.
        ...exchange('r2', 'Read', { file_path: path }, file),
        ...exchange('r3', 'Read', { file_path: path }, file),
        // Over the limit again: cut, and the whole r2 is no longer the latest the model has for it.
        ...exchange('r4', 'Read', { file_path: path }, long),
        ...exchange('r5', 'Read', { file_path: path }, file),
      ],
      { ...claude, maxResultBytes: 1024 },
    );
    expect(out.fates.map((fate) => [fate.callId, fate.fate, fate.sameAs])).toEqual([
      ['r1', 'truncated', undefined],
      ['r2', 'shown', undefined],
      ['r3', 'elided', 'r2'],
      ['r4', 'truncated', undefined],
      ['r5', 'shown', undefined],
    ]);
    expect(out.outputs[4]).toBe(file);
  });
});

describe('rule 3: read-only is ours to decide', () => {
  const repeated = (name: string, input: unknown, output = file): Message[] => [
    ...exchange(`${name}-1`, name, input, output),
    ...exchange(`${name}-2`, name, input, output),
  ];
  /** The fate of each tool's repeat, by tool name. */
  const secondFates = (context: Message[], options: ElideOptions) => {
    const { fates } = elide(context, options);
    // Every repeat is longer than its marker: only the allow-list can keep one whole.
    for (const fate of fates) expect(fate.bytes).toBeGreaterThan(bytesOf(elisionMarker(`${fate.name}-1`)));
    return Object.fromEntries(
      fates.filter((fate) => fate.callId.endsWith('-2')).map((fate) => [fate.name, fate.fate]),
    );
  };
  const todos = {
    todos: [{ content: 'Fix the build', status: 'in_progress', activeForm: 'Fixing the build' }],
  };
  const todoOutput =
    'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. ' +
    'Please proceed with the current tasks if applicable. '.repeat(3);
  const context = (): Message[] => [
    ...repeated('Read', { file_path: path }),
    ...repeated('Glob', { pattern: '**/*.ts' }),
    ...repeated('Grep', { pattern: 'TODO', path: '/home/ada/app' }),
    ...repeated('LS', { path: '/home/ada/app' }),
    ...repeated('WebFetch', { url: 'https://example.com', prompt: 'summarise' }),
    ...repeated('Bash', { command: 'git status' }),
    ...repeated('Edit', { file_path: path, old_string: 'a', new_string: 'b' }),
    ...repeated('TodoWrite', todos, todoOutput),
    ...repeated('Task', { description: 'look around', prompt: 'Find the config', subagent_type: 'Explore' }),
    ...repeated('Agent', { description: 'look around', prompt: 'Find the config' }),
    // An MCP tool that calls itself read-only (its readOnlyHint): the hint is not ours, so it is not enough.
    ...repeated('mcp__fs__read_file', { path, annotations: { readOnlyHint: true } }),
  ];

  it('elides only tools our catalogue marks read-only; TodoWrite, Task hand-offs and self-declared ones are not', () => {
    expect(secondFates(context(), claude)).toEqual({
      Read: 'elided',
      Glob: 'elided',
      Grep: 'elided',
      LS: 'elided',
      WebFetch: 'elided',
      Bash: 'shown',
      Edit: 'shown',
      TodoWrite: 'shown',
      Task: 'shown',
      Agent: 'shown',
      mcp__fs__read_file: 'shown',
    });
    for (const name of ['TodoWrite', 'Task', 'Agent', 'Bash', 'mcp__fs__read_file'])
      expect(isReadOnly('claude-code', name)).toBe(false);
    // A tool the catalogue lacks is offered with an inferred schema, and inferred tools are never read-only.
    const session: Session = {
      id: 's',
      agent: 'claude-code',
      sourceId: 's',
      kind: 'main',
      messages: context(),
    };
    expect(toolsFor(session).find((spec) => spec.name === 'mcp__fs__read_file')).toMatchObject({
      readOnly: false,
      inferred: true,
    });
  });

  it('each agent has its own list (opencode: read, grep, glob; not todowrite, task, bash)', () => {
    const opencode = elideOptions('opencode', { elideRepeats: true, extraTools: [] }) as ElideOptions;
    expect(
      secondFates(
        [
          ...repeated('read', { filePath: path }),
          ...repeated('grep', { pattern: 'TODO' }),
          ...repeated('glob', { pattern: '*.ts' }),
          ...repeated('todowrite', todos, todoOutput),
          ...repeated('task', { description: 'd', prompt: 'p', subagent_type: 'general' }),
          ...repeated('bash', { command: 'ls' }),
          // Claude Code's name means nothing to opencode's list.
          ...repeated('Read', { file_path: path }),
        ],
        opencode,
      ),
    ).toEqual({
      read: 'elided',
      grep: 'elided',
      glob: 'elided',
      todowrite: 'shown',
      task: 'shown',
      bash: 'shown',
      Read: 'shown',
    });
  });

  it('a tool’s own read-only hint is not enough: docker-agent marks these ReadOnlyHint, and they change state', () => {
    const docker = elideOptions('docker-agent', { elideRepeats: true, extraTools: [] }) as ElideOptions;
    expect(
      secondFates(
        [
          ...repeated('read_file', { path }),
          ...repeated('create_todo', { description: 'Fix the build' }, todoOutput),
          ...repeated('update_todos', { updates: [{ id: '1', status: 'completed' }] }, todoOutput),
          ...repeated('transfer_task', { agent: 'reviewer', task: 'review', expected_output: 'ok' }),
          ...repeated('handoff', { agent: 'reviewer' }),
        ],
        docker,
      ),
    ).toEqual({
      read_file: 'elided',
      create_todo: 'shown',
      update_todos: 'shown',
      transfer_task: 'shown',
      handoff: 'shown',
    });
  });

  it('never elides read-only tools that report what is new since the last call (background output)', () => {
    // Two identical BashOutput results mean more of the same output, not "nothing has changed".
    expect(
      secondFates(
        [
          ...repeated('Read', { file_path: '/repo/a.ts' }),
          ...repeated('BashOutput', { bash_id: 'shell_1' }),
          ...repeated('TaskOutput', { task_id: 'task_1' }),
        ],
        claude,
      ),
    ).toEqual({ Read: 'elided', BashOutput: 'shown', TaskOutput: 'shown' });
    const docker = elideOptions('docker-agent', { elideRepeats: true, extraTools: [] }) as ElideOptions;
    expect(
      secondFates(
        [...repeated('view_background_job', { job_id: 'j1' }), ...repeated('list_directory', { path: '.' })],
        docker,
      ),
    ).toEqual({ view_background_job: 'shown', list_directory: 'elided' });
  });

  it('--elide-tool NAME extends the list, and only by the names given', () => {
    const extended = elideOptions('claude-code', {
      elideRepeats: true,
      extraTools: ['Bash', 'mcp__fs__read_file'],
    }) as ElideOptions;
    expect(secondFates(context(), extended)).toMatchObject({
      Read: 'elided',
      Bash: 'elided',
      mcp__fs__read_file: 'elided',
      TodoWrite: 'shown',
      Task: 'shown',
      Edit: 'shown',
    });
  });

  it('without --elide-repeats nothing is elided (--max-result-bytes alone only cuts), and with neither there are no options', () => {
    const cutOnly = elideOptions('claude-code', {
      elideRepeats: false,
      extraTools: [],
      maxResultBytes: 100_000,
    }) as ElideOptions;
    const input = context();
    const out = elide(input, cutOnly);
    expect(out.fates.every((fate) => fate.fate === 'shown')).toBe(true);
    // Nothing changed, so the very same message objects.
    out.messages.forEach((message, index) => {
      expect(message).toBe(input[index]);
    });
    expect(elideOptions('claude-code', { elideRepeats: false, extraTools: [] })).toBeUndefined();
    expect(elideOptions('claude-code', undefined)).toBeUndefined();
  });
});

describe('rule 4: bounded state', () => {
  it('keeps at most maxKeys baselines; the oldest is forgotten and its next repeat is shown in full', () => {
    const options: ElideOptions = { ...claude, maxKeys: 3 };
    const read = (id: string, n: number) => exchange(id, 'Read', { file_path: `/f${n}` }, text(400, `f${n}`));
    const context = [
      // Ten files read once: only f7, f8, f9 are remembered.
      ...Array.from({ length: 10 }, (_, n) => read(`a${n}`, n)).flat(),
      // Repeats of the remembered ones are elided (and do not push anything out)…
      ...read('b9', 9),
      ...read('b8', 8),
      ...read('b7', 7),
      // …a forgotten one is shown in full and remembered again, pushing out the oldest (f7)…
      ...read('b6', 6),
      ...read('c6', 6),
      // …so f7's next repeat is shown in full.
      ...read('c7', 7),
    ];
    const out = elide(context, options);
    expect(out.fates.slice(10).map((fate) => [fate.callId, fate.fate, fate.sameAs])).toEqual([
      ['b9', 'elided', 'a9'],
      ['b8', 'elided', 'a8'],
      ['b7', 'elided', 'a7'],
      ['b6', 'shown', undefined],
      ['c6', 'elided', 'b6'],
      ['c7', 'shown', undefined],
    ]);
    // The same bound seen from inside: the maps never hold more than maxKeys keys.
    const elider = new Elider(options);
    for (let n = 0; n < 1000; n++) showThrough(elider, [...read(`x${n}`, n), ...read(`y${n}`, n)]);
    const state = elider as unknown as { baselines: Map<string, unknown>; elidedKeys: Set<string> };
    expect(state.baselines.size).toBe(3);
    expect(state.elidedKeys.size).toBeLessThanOrEqual(3);
  });

  it('memory stays flat over 10,000 sessions counted by stats --elision', () => {
    // One synthetic session: a few reads repeated, a Bash, an error; distinct texts per session, so nothing is
    // shared between sessions except what the code itself keeps.
    const session = (n: number): Session => {
      const body = text(2000, `s${n}`);
      return {
        id: `session-${n}`,
        agent: 'claude-code',
        sourceId: `source-${n}`,
        kind: 'main',
        messages: [
          user(`task ${n}`),
          ...exchange(`${n}-1`, 'Read', { file_path: `/s${n}/a.ts` }, body),
          ...exchange(`${n}-2`, 'Bash', { command: `make ${n}` }, body),
          ...exchange(`${n}-3`, 'Read', { file_path: `/s${n}/a.ts` }, body),
          ...exchange(`${n}-4`, 'Read', { file_path: `/s${n}/missing` }, `no such file ${n}`, {
            isError: true,
          }),
          ...exchange(`${n}-5`, 'Read', { file_path: `/s${n}/a.ts` }, body),
          assistant([{ type: 'text', text: 'done' }]),
        ],
      };
    };
    const figures = emptyFigures();
    const count = (n: number) =>
      addSession(figures, session(n), 0, claude, (value) => Math.ceil(value.length / 4));
    for (let n = 0; n < 1000; n++) count(n);
    collectGarbage();
    const at1000 = process.memoryUsage().heapUsed;
    for (let n = 1000; n < 10_000; n++) count(n);
    collectGarbage();
    const at10000 = process.memoryUsage().heapUsed;
    expect(figures.sessions).toBe(10_000);
    expect(figures.perTool.get('Read')).toMatchObject({ results: 40_000, elided: 20_000 });
    // 9,000 more sessions of ~12 KB each went through: a leak of even one result per session would be ~18 MB.
    // The bound is generous for GC noise, far under that.
    expect(at10000 - at1000).toBeLessThan(6 * 1024 * 1024);
  });
});

describe('rule 5: the marker only where it is shorter', () => {
  it('replaces a payload only when the marker is shorter, whatever the tool name’s length', () => {
    const longName = `mcp__${'x'.repeat(300)}__read`;
    const options: ElideOptions = { readOnly: (name) => name === longName };
    const marker = elisionMarker('m1');
    const same = 'y'.repeat(bytesOf(marker));
    const longer = 'z'.repeat(bytesOf(marker) + 1);
    const out = elide(
      [
        ...exchange('m1', longName, { n: 1 }, same),
        ...exchange('m2', longName, { n: 1 }, same),
        ...exchange('m3', longName, { n: 2 }, longer),
        ...exchange('m4', longName, { n: 2 }, longer),
      ],
      options,
    );
    // As long as the marker: no gain, shown. One byte longer: elided. The tool's name is not in the marker.
    expect(out.outputs).toEqual([same, same, longer, elisionMarker('m3')]);
    expect(marker).not.toContain(longName);
    expect(out.fates.map((fate) => fate.fate)).toEqual(['shown', 'shown', 'shown', 'elided']);
    expect(out.fates[3]?.shownBytes).toBeLessThan(out.fates[3]?.bytes ?? 0);
  });

  it('counts bytes, not characters, and a long call id makes the marker longer', () => {
    const marker = elisionMarker('k1');
    // Fewer characters than the marker but more bytes: elided.
    const wide = 'ü'.repeat(Math.ceil(marker.length / 2) + 1);
    expect(wide.length).toBeLessThan(marker.length);
    expect(bytesOf(wide)).toBeGreaterThan(bytesOf(marker));
    const longId = `toolu_${'9'.repeat(400)}`;
    const payload = text(300);
    expect(bytesOf(elisionMarker(longId))).toBeGreaterThan(300);
    const out = elide(
      [
        ...exchange('k1', 'Read', { file_path: '/wide' }, wide),
        ...exchange('k2', 'Read', { file_path: '/wide' }, wide),
        ...exchange(longId, 'Read', { file_path: path }, payload),
        ...exchange('k3', 'Read', { file_path: path }, payload),
      ],
      claude,
    );
    expect(out.outputs).toEqual([wide, marker, payload, payload]);
  });
});

describe('rule 5 with images: sizes are of what a tool message carries', () => {
  it('measures an image output by its text form (the image is named, not sent), and compares it whole', () => {
    const image = (data: string) => ({ type: 'image' as const, mediaType: 'image/png', data });
    const withImage = (id: string, note: string, data: string): Message[] => [
      assistant([call(id, 'Read', { file_path: '/shot.png' })]),
      tool([
        {
          type: 'tool_result',
          callId: id,
          name: 'Read',
          output: [{ type: 'text', text: note }, image(data)],
          isError: false,
        },
      ]),
    ];
    const pixelsA = 'A'.repeat(100_000);
    const pixelsB = 'B'.repeat(100_000);
    // The model is sent "Screenshot\n[image image/png]": 27 bytes, shorter than any marker, so never elided,
    // and never cut by a limit well above that, however large the image data.
    const small = elide(
      [...withImage('i1', 'Screenshot', pixelsA), ...withImage('i2', 'Screenshot', pixelsA)],
      { ...claude, maxResultBytes: 4096 },
    );
    const sent = 'Screenshot\n[image image/png]';
    expect(small.fates).toEqual([shown('i1', 'Read', sent), shown('i2', 'Read', sent)]);
    expect(small.outputs.map((output) => (typeof output === 'string' ? output : output.length))).toEqual([
      2, 2,
    ]);
    // With a long text part: the same text and the same image is elided; another image is another result.
    const long = text(600, 'caption');
    const out = elide(
      [
        ...withImage('j1', long, pixelsA),
        ...withImage('j2', long, pixelsB),
        ...withImage('j3', long, pixelsB),
      ],
      claude,
    );
    const longSent = `${long}\n[image image/png]`;
    expect(out.fates).toEqual([
      shown('j1', 'Read', longSent),
      shown('j2', 'Read', longSent),
      elided('j3', 'Read', longSent, 'j2'),
    ]);
    expect(out.outputs[2]).toBe(elisionMarker('j2'));
  });
});

describe('rule 6: errors, changes, key order, parallel calls', () => {
  it('never elides an error, and an error ends the baseline', () => {
    const error = `<tool_use_error>File does not exist. ${text(300, 'error')}</tool_use_error>`;
    const out = elide(
      [
        ...exchange('e1', 'Read', { file_path: '/missing' }, error, { isError: true }),
        ...exchange('e2', 'Read', { file_path: '/missing' }, error, { isError: true }),
        ...exchange('r1', 'Read', { file_path: path }, file),
        ...exchange('r2', 'Read', { file_path: path }, error, { isError: true }),
        // After the error, the model's latest answer for this read is the error: the file is shown again.
        ...exchange('r3', 'Read', { file_path: path }, file),
        ...exchange('r4', 'Read', { file_path: path }, file),
      ],
      claude,
    );
    expect(out.outputs).toEqual([error, error, file, error, file, elisionMarker('r3')]);
    expect(out.fates).toEqual([
      shown('e1', 'Read', error),
      shown('e2', 'Read', error),
      shown('r1', 'Read', file),
      shown('r2', 'Read', error),
      shown('r3', 'Read', file),
      elided('r4', 'Read', file, 'r3'),
    ]);
  });

  it('never elides a synthetic result (an interrupted call)', () => {
    const interrupted = `Tool call interrupted: ${text(300, 'interrupted')}`;
    const out = elide(
      [
        ...exchange('i1', 'Read', { file_path: path }, interrupted, { isError: true, synthetic: true }),
        ...exchange('i2', 'Read', { file_path: path }, interrupted, { isError: true, synthetic: true }),
        // Not flagged as an error, but made by us: still never a marker.
        ...exchange('i3', 'Read', { file_path: path }, interrupted, { synthetic: true }),
      ],
      claude,
    );
    expect(out.outputs).toEqual([interrupted, interrupted, interrupted]);
  });

  it('a changed output becomes the new baseline', () => {
    const v2 = text(600, 'v2');
    const out = elide(
      [
        ...exchange('r1', 'Read', { file_path: path }, file),
        ...exchange('r2', 'Read', { file_path: path }, file),
        ...exchange('r3', 'Read', { file_path: path }, v2),
        ...exchange('r4', 'Read', { file_path: path }, v2),
      ],
      claude,
    );
    expect(out.outputs).toEqual([file, elisionMarker('r1'), v2, elisionMarker('r3')]);
    expect(out.fates).toEqual([
      shown('r1', 'Read', file),
      elided('r2', 'Read', file, 'r1'),
      shown('r3', 'Read', v2),
      elided('r4', 'Read', v2, 'r3'),
    ]);
  });

  it('reverting to an older output is shown in full', () => {
    const v2 = text(600, 'v2');
    const out = elide(
      [
        ...exchange('r1', 'Read', { file_path: path }, file),
        ...exchange('r2', 'Read', { file_path: path }, v2),
        // Back to the first content: not identical to the latest, so whole (a marker would point at stale r1).
        ...exchange('r3', 'Read', { file_path: path }, file),
        ...exchange('r4', 'Read', { file_path: path }, file),
      ],
      claude,
    );
    expect(out.outputs).toEqual([file, v2, file, elisionMarker('r3')]);
    expect(out.fates).toEqual([
      shown('r1', 'Read', file),
      shown('r2', 'Read', v2),
      shown('r3', 'Read', file),
      elided('r4', 'Read', file, 'r3'),
    ]);
  });

  it('argument key order does not matter (nested objects too); argument values and tool names do', () => {
    const grep = (id: string, input: unknown, name = 'Grep') => exchange(id, name, input, file);
    const out = elide(
      [
        ...grep('g1', { pattern: 'x', path: '/a', opts: { i: true, n: 1 } }),
        ...grep('g2', { opts: { n: 1, i: true }, path: '/a', pattern: 'x' }),
        ...grep('g3', { pattern: 'x', path: '/b', opts: { i: true, n: 1 } }),
        ...grep('g4', { pattern: 'x', path: '/a', opts: { i: true, n: 2 } }),
        ...grep('g5', { pattern: 'x', path: '/a', opts: { i: true, n: 1 } }, 'Glob'),
      ],
      claude,
    );
    expect(out.outputs).toEqual([file, elisionMarker('g1'), file, file, file]);
    expect(callKey('Grep', { a: 1, b: { c: 2, d: 3 } })).toBe(callKey('Grep', { b: { d: 3, c: 2 }, a: 1 }));
    expect(callKey('Read', undefined)).toBe(callKey('Read', {}));
  });

  it('parallel calls in one turn: the earlier result in the context is the baseline, the same on every run', () => {
    const other = text(600, 'other');
    const parallel = (order: string[]): Message[] => {
      const outputs: Record<string, string> = { p1: file, p2: file, p3: other, p4: file };
      return [
        user('look at these'),
        assistant([
          call('p1', 'Read', { file_path: path }),
          call('p2', 'Read', { file_path: path }),
          call('p3', 'Read', { file_path: '/other' }),
          call('p4', 'Read', { file_path: path }),
        ]),
        // One tool message per result, as chat form has them, in the order given.
        ...order.map((id) => tool([result(id, 'Read', outputs[id] ?? '')])),
      ];
    };
    const inOrder = elide(parallel(['p1', 'p2', 'p3', 'p4']), claude);
    expect(inOrder.outputs).toEqual([file, elisionMarker('p1'), other, elisionMarker('p1')]);
    // Deterministic: the same input gives the same output, every time.
    for (let n = 0; n < 5; n++) {
      const again = elide(parallel(['p1', 'p2', 'p3', 'p4']), claude);
      expect({ outputs: again.outputs, fates: again.fates }).toEqual({
        outputs: inOrder.outputs,
        fates: inOrder.fates,
      });
    }
    // Results recorded out of call order: the one the model sees first is the baseline.
    const reordered = elide(parallel(['p4', 'p3', 'p2', 'p1']), claude);
    expect(reordered.outputs).toEqual([file, other, elisionMarker('p4'), elisionMarker('p4')]);
    // All results in one message work the same way.
    const oneMessage = elide(
      [
        assistant([call('q1', 'Read', { file_path: path }), call('q2', 'Read', { file_path: path })]),
        tool([result('q1', 'Read', file), result('q2', 'Read', file)]),
      ],
      claude,
    );
    expect(oneMessage.outputs).toEqual([file, elisionMarker('q1')]);
  });
});

describe('Elider over a live context (free mode)', () => {
  it('knows which calls were last shown as a marker, so asking again is a re-ask', () => {
    const elider = new Elider(claude);
    const key = elider.call('f1', 'Read', { file_path: path });
    expect(elider.result(result('f1', 'Read', file)).fate.fate).toBe('shown');
    expect(elider.elided(key)).toBe(false);
    elider.call('f2', 'Read', { file_path: path });
    const second = elider.result(result('f2', 'Read', file));
    expect(second.shown.output).toBe(elisionMarker('f1'));
    // The model now has a marker for this call: asking again (any key order) is a re-ask.
    expect(elider.elided(callKey('Read', { file_path: path }))).toBe(true);
    // A result shown whole for it ends that.
    elider.call('f3', 'Read', { file_path: path });
    elider.result(result('f3', 'Read', text(600, 'changed')));
    expect(elider.elided(key)).toBe(false);
    // A compaction forgets everything the model was shown.
    elider.call('f4', 'Read', { file_path: path });
    elider.result(result('f4', 'Read', text(600, 'changed')));
    expect(elider.elided(key)).toBe(true);
    elider.reset();
    expect(elider.elided(key)).toBe(false);
    elider.call('f5', 'Read', { file_path: path });
    expect(elider.result(result('f5', 'Read', text(600, 'changed'))).fate.fate).toBe('shown');
  });
  it('forgets a baseline whose output the agent cleared (opencode pruning), and only that one', () => {
    const elider = new Elider(claude);
    elider.call('a1', 'Read', { file_path: path });
    elider.result(result('a1', 'Read', file));
    elider.call('b1', 'Read', { file_path: `${path}.other` });
    elider.result(result('b1', 'Read', text(600, 'other')));
    // a1's output is no longer in the context: a repeat of it must be shown whole, not pointed at a1.
    elider.forgetCall('a1');
    elider.call('a2', 'Read', { file_path: path });
    const again = elider.result(result('a2', 'Read', file));
    expect(again.fate.fate).toBe('shown');
    // a2 is the new baseline; b1 was untouched.
    elider.call('a3', 'Read', { file_path: path });
    expect(elider.result(result('a3', 'Read', file)).shown.output).toBe(elisionMarker('a2'));
    elider.call('b2', 'Read', { file_path: `${path}.other` });
    expect(elider.result(result('b2', 'Read', text(600, 'other'))).shown.output).toBe(elisionMarker('b1'));
    // Forgetting a call that set no baseline changes nothing.
    elider.forgetCall('nope');
    elider.call('a4', 'Read', { file_path: path });
    expect(elider.result(result('a4', 'Read', file)).shown.output).toBe(elisionMarker('a2'));
  });
});

describe('stats --elision figures', () => {
  it('counts each result once per tool, and every turn context for what a forced replay sends', () => {
    const big = text(4000, 'big');
    const session: Session = {
      id: 's1',
      agent: 'claude-code',
      sourceId: 's1',
      kind: 'main',
      messages: [
        user('go'),
        ...exchange('r1', 'Read', { file_path: path }, big),
        ...exchange('r2', 'Read', { file_path: path }, big),
        ...exchange('b1', 'Bash', { command: 'ls' }, big),
        ...exchange('b2', 'Bash', { command: 'ls' }, big),
        assistant([{ type: 'text', text: 'done' }]),
      ],
    };
    const figures = emptyFigures();
    const tokens = (value: string) => value.length;
    addSession(figures, session, 0, claude, tokens);
    const marker = elisionMarker('r1');
    expect(figures.perTool.get('Read')).toEqual({
      results: 2,
      elided: 1,
      truncated: 0,
      bytesBefore: 8000,
      bytesAfter: 4000 + bytesOf(marker),
      tokensBefore: 8000,
      tokensAfter: 4000 + marker.length,
    });
    expect(figures.perTool.get('Bash')).toMatchObject({
      results: 2,
      elided: 0,
      bytesBefore: 8000,
      bytesAfter: 8000,
    });
    expect(totals(figures)).toMatchObject({ results: 4, elided: 1 });
    // Five turns; r2 is in the contexts of turns 3, 4 and 5.
    expect(figures.contexts.turns).toBe(5);
    expect(figures.contexts.bytesBefore - figures.contexts.bytesAfter).toBe(3 * (4000 - bytesOf(marker)));
  });
});
