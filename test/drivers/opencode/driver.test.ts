// The opencode driver's pure parts: how an opencode tool call is named in another agent's recording (and that
// the mapped call really finds the recorded result in the short-circuit), how a session's typed prompts are cut
// out of its messages with the recorded turns that answered each, and how paths are moved to another workspace.
import { describe, expect, it } from 'vitest';
import { promptsOf, rebase } from '../../../src/drivers/common/prompts.js';
import { opencodeCall, recordedNames } from '../../../src/drivers/opencode/mapping.js';
import type { AgentId, Message, Part } from '../../../src/model/session.js';
import { turns } from '../../../src/model/turns.js';
import { isReadOnly, toolDefaults } from '../../../src/replay/catalogue/index.js';
import { type Answer, ShortCircuit } from '../../../src/replay/shortcircuit.js';

let line = 0;
const at = () => ({ file: 'mem.jsonl', line: ++line });
const user = (text: string, extra: Partial<Message> = {}): Message => ({
  role: 'user',
  parts: [{ type: 'text', text }],
  source: at(),
  ...extra,
});
const assistant = (...parts: Part[]): Message => ({ role: 'assistant', parts, source: at() });
const said = (text: string): Message => assistant({ type: 'text', text });
const calls = (id: string, name: string, input: unknown): Message =>
  assistant({ type: 'tool_call', id, name, input });
const answers = (id: string, output: string): Message => ({
  role: 'tool',
  parts: [{ type: 'tool_result', callId: id, output, isError: false }],
  source: at(),
});

describe('recordedNames', () => {
  it('gives an opencode session the call itself, arguments untouched', () => {
    const args = { filePath: '/repo/a.ts', offset: 3 };
    const names = recordedNames('opencode', 'read', args);
    expect(names).toEqual([{ name: 'read', input: args }]);
    expect(names[0]?.input).toBe(args);
    expect(recordedNames('opencode', 'todowrite', { todos: [] })).toEqual([
      { name: 'todowrite', input: { todos: [] } },
    ]);
  });

  it("maps Claude Code's tools to their names and argument names", () => {
    const cc = (tool: string, args: unknown) => recordedNames('claude-code', tool, args);
    expect(cc('read', { filePath: '/repo/a.ts', offset: 10, limit: 20 })).toStrictEqual([
      { name: 'Read', input: { file_path: '/repo/a.ts', offset: 10, limit: 20 } },
    ]);
    expect(cc('write', { filePath: '/repo/b.ts', content: 'x = 1\n' })).toStrictEqual([
      { name: 'Write', input: { file_path: '/repo/b.ts', content: 'x = 1\n' } },
    ]);
    expect(
      cc('edit', { filePath: '/repo/a.ts', oldString: 'a', newString: 'b', replaceAll: true }),
    ).toStrictEqual([
      {
        name: 'Edit',
        input: { file_path: '/repo/a.ts', old_string: 'a', new_string: 'b', replace_all: true },
      },
    ]);
    expect(cc('bash', { command: 'npm test', timeout: 60000, description: 'Run tests' })).toStrictEqual([
      { name: 'Bash', input: { command: 'npm test', timeout: 60000, description: 'Run tests' } },
    ]);
    expect(cc('glob', { pattern: '**/*.ts', path: '/repo/src' })).toStrictEqual([
      { name: 'Glob', input: { pattern: '**/*.ts', path: '/repo/src' } },
    ]);
    expect(cc('grep', { pattern: 'TODO', path: '/repo', include: '*.ts' })).toStrictEqual([
      { name: 'Grep', input: { pattern: 'TODO', path: '/repo', glob: '*.ts' } },
    ]);
  });

  it('leaves absent arguments out instead of sending them as undefined', () => {
    const [read] = recordedNames('claude-code', 'read', { filePath: '/repo/a.ts' });
    expect(read?.input).toStrictEqual({ file_path: '/repo/a.ts' });
    expect(Object.keys(read?.input as object)).toEqual(['file_path']);
    const [edit] = recordedNames('claude-code', 'edit', { filePath: '/a', oldString: 'x', newString: 'y' });
    expect(Object.keys(edit?.input as object).sort()).toEqual(['file_path', 'new_string', 'old_string']);
    // An argument opencode has and Claude's tool does not is not carried over either.
    const [bash] = recordedNames('claude-code', 'bash', { command: 'ls', workdir: '/tmp' });
    expect(bash?.input).toStrictEqual({ command: 'ls' });
    // A falsy value that is present is kept.
    const [edit2] = recordedNames('claude-code', 'edit', {
      filePath: '/a',
      oldString: '',
      newString: 'y',
      replaceAll: false,
    });
    expect(edit2?.input).toStrictEqual({
      file_path: '/a',
      old_string: '',
      new_string: 'y',
      replace_all: false,
    });
  });

  it("renames opencode's `general` sub-agent to Claude's `general-purpose`, other types as they are", () => {
    const task = (subagent_type: string) =>
      recordedNames('claude-code', 'task', { description: 'Find it', prompt: 'Look for X', subagent_type });
    expect(task('general')).toEqual([
      {
        name: 'Task',
        input: { description: 'Find it', prompt: 'Look for X', subagent_type: 'general-purpose' },
      },
    ]);
    expect(task('explore')[0]?.input).toEqual({
      description: 'Find it',
      prompt: 'Look for X',
      subagent_type: 'explore',
    });
  });

  it('treats arguments that are not an object as none', () => {
    expect(recordedNames('claude-code', 'read', null)).toStrictEqual([{ name: 'Read', input: {} }]);
    expect(recordedNames('claude-code', 'read', 'a.ts')).toStrictEqual([{ name: 'Read', input: {} }]);
  });

  it('has no mapping (a miss) for tools without a faithful counterpart, or agents without a table', () => {
    expect(recordedNames('claude-code', 'webfetch', { url: 'https://x', format: 'text' })).toEqual([]);
    expect(recordedNames('claude-code', 'todowrite', { todos: [] })).toEqual([]);
    expect(recordedNames('claude-code', 'Read', { file_path: '/a' })).toEqual([]);
    expect(recordedNames('codex', 'read', { filePath: '/a' })).toEqual([]);
    expect(recordedNames('docker-agent', 'edit', { filePath: '/a' })).toEqual([]);
    expect(recordedNames('cursor', 'read', { filePath: '/a' })).toEqual([]);
    expect(recordedNames('cursor', 'bash', { command: 'ls' })).toEqual([]);
  });

  it('turns recorded calls into the opencode calls that map back to them (--model recorded on other agents)', () => {
    const roundTrip = (agent: string, name: string, input: Record<string, unknown>) => {
      const offered = opencodeCall(agent, name, input);
      expect(offered).toBeDefined();
      return { offered, back: recordedNames(agent, offered?.name ?? '', offered?.input) };
    };
    const claude: [string, Record<string, unknown>][] = [
      ['Read', { file_path: '/repo/a.ts', offset: 10, limit: 20 }],
      ['Write', { file_path: '/repo/b.ts', content: 'x' }],
      ['Edit', { file_path: '/repo/a.ts', old_string: 'a', new_string: 'b', replace_all: true }],
      ['Bash', { command: 'npm test', description: 'Run tests', timeout: 1000 }],
      ['Bash', { command: 'ls' }],
      ['Glob', { pattern: '**/*.ts', path: '/repo' }],
      ['Grep', { pattern: 'TODO', path: '/repo', glob: '*.ts' }],
      ['Task', { description: 'd', prompt: 'p', subagent_type: 'general-purpose' }],
    ];
    for (const [name, input] of claude) {
      const { back } = roundTrip('claude-code', name, input);
      expect(back).toStrictEqual([{ name, input }]);
    }
    // opencode requires a bash description: one is offered, and dropped again on the way back.
    expect(opencodeCall('claude-code', 'Bash', { command: 'ls' })).toStrictEqual({
      name: 'bash',
      input: { description: '', command: 'ls' },
    });
    expect(opencodeCall('claude-code', 'Task', { subagent_type: 'general-purpose' })?.input).toEqual({
      subagent_type: 'general',
    });
    // Tools opencode has no counterpart for are offered as they are (opencode answers them as unknown).
    expect(opencodeCall('claude-code', 'WebFetch', { url: 'https://x', prompt: 'p' })).toBeUndefined();
    expect(opencodeCall('cursor', 'Read', {})).toBeUndefined();
    expect(opencodeCall('opencode', 'read', { filePath: '/a' })).toEqual({
      name: 'read',
      input: { filePath: '/a' },
    });

    // Codex: each shell tool becomes bash, and bash maps back to a list that holds the original.
    for (const [name, input] of [
      ['exec_command', { cmd: 'make' }],
      ['shell_command', { command: 'make' }],
      ['shell', { command: ['bash', '-lc', 'make'] }],
    ] as const) {
      const { offered, back } = roundTrip('codex', name, input);
      expect(offered).toEqual({ name: 'bash', input: { command: 'make', description: '' } });
      expect(back).toContainEqual({ name, input });
    }
    expect(opencodeCall('codex', 'apply_patch', { input: '*** Begin Patch' })).toBeUndefined();

    // docker-agent, fetch included.
    for (const [name, input] of [
      ['read_file', { path: '/repo/a.ts' }],
      ['write_file', { path: '/repo/a.ts', content: 'hi' }],
      ['shell', { cmd: 'make' }],
      ['fetch', { urls: ['https://example.com'] }],
    ] as const) {
      expect(roundTrip('docker-agent', name, input).back).toStrictEqual([{ name, input }]);
    }
  });

  it("gives codex's three shell tools for a bash call, most likely first", () => {
    expect(recordedNames('codex', 'bash', { command: 'ls -la', description: 'List' })).toStrictEqual([
      { name: 'exec_command', input: { cmd: 'ls -la' } },
      { name: 'shell_command', input: { command: 'ls -la' } },
      { name: 'shell', input: { command: ['bash', '-lc', 'ls -la'] } },
    ]);
  });

  it("maps docker-agent's read, write, bash and webfetch", () => {
    const da = (tool: string, args: unknown) => recordedNames('docker-agent', tool, args);
    expect(da('read', { filePath: '/repo/a.ts' })).toStrictEqual([
      { name: 'read_file', input: { path: '/repo/a.ts' } },
    ]);
    expect(da('write', { filePath: '/repo/a.ts', content: 'hi' })).toStrictEqual([
      { name: 'write_file', input: { path: '/repo/a.ts', content: 'hi' } },
    ]);
    expect(da('bash', { command: 'make' })).toStrictEqual([{ name: 'shell', input: { cmd: 'make' } }]);
    expect(da('webfetch', { url: 'https://example.com', format: 'markdown' })).toStrictEqual([
      { name: 'fetch', input: { urls: ['https://example.com'] } },
    ]);
  });
});

describe('an opencode call answered from another agent recording', () => {
  /** What the driver does: each candidate in turn against the short-circuit, the first hit wins. */
  function answer(circuit: ShortCircuit, agent: string, tool: string, args: unknown): Answer {
    let first: Answer | undefined;
    for (const candidate of recordedNames(agent, tool, args)) {
      const tried = circuit.answer(candidate.name, candidate.input);
      if (tried.kind === 'hit') return tried;
      first ??= tried;
    }
    return first ?? { kind: 'miss', nearest: [] };
  }
  const circuitOf = (agent: AgentId, messages: Message[], cwd = '/repo') =>
    new ShortCircuit(messages, {
      cwd,
      readOnly: (tool) => isReadOnly(agent, tool),
      defaults: (tool) => toolDefaults(agent, tool),
    });
  const output = (answer: Answer) => (answer.kind === 'hit' ? [answer.how, answer.result.output] : 'miss');

  const claude: Message[] = [
    user('Look at a.ts and find the TODOs'),
    calls('toolu_1', 'Read', { file_path: '/repo/src/a.ts' }),
    answers('toolu_1', '1\texport const a = 1;'),
    calls('toolu_2', 'Grep', { pattern: 'TODO', path: '/repo/src', glob: '*.ts' }),
    answers('toolu_2', 'src/a.ts:3: // TODO'),
    calls('toolu_3', 'Edit', { file_path: '/repo/src/a.ts', old_string: '1', new_string: '2' }),
    answers('toolu_3', 'The file has been updated.'),
    said('Done.'),
  ];

  it("finds the recorded Read {file_path} result for opencode's read {filePath}", () => {
    const circuit = circuitOf('claude-code', claude);
    const hit = answer(circuit, 'claude-code', 'read', { filePath: '/repo/src/a.ts' });
    expect(output(hit)).toEqual(['exact', '1\texport const a = 1;']);
    // Called with the opencode name directly, the recording has no such call.
    expect(circuitOf('claude-code', claude).answer('read', { filePath: '/repo/src/a.ts' }).kind).toBe('miss');
  });

  it('finds grep (include → glob) and edit (camelCase → snake_case) results, and misses what was not recorded', () => {
    const circuit = circuitOf('claude-code', claude);
    expect(
      output(answer(circuit, 'claude-code', 'grep', { pattern: 'TODO', path: '/repo/src', include: '*.ts' })),
    ).toEqual(['exact', 'src/a.ts:3: // TODO']);
    expect(
      output(
        answer(circuit, 'claude-code', 'edit', {
          filePath: '/repo/src/a.ts',
          oldString: '1',
          newString: '2',
        }),
      ),
    ).toEqual(['exact', 'The file has been updated.']);
    expect(answer(circuit, 'claude-code', 'read', { filePath: '/repo/src/b.ts' }).kind).toBe('miss');
    expect(answer(circuit, 'claude-code', 'webfetch', { url: 'https://x', format: 'text' })).toEqual({
      kind: 'miss',
      nearest: [],
    });
  });

  it('tries the codex shell tools in order until one is in the recording', () => {
    const codex: Message[] = [
      user('What is here?'),
      calls('c1', 'shell', { command: ['bash', '-lc', 'ls'] }),
      answers('c1', 'README.md'),
    ];
    expect(output(answer(circuitOf('codex', codex), 'codex', 'bash', { command: 'ls' }))).toEqual([
      'exact',
      'README.md',
    ]);
  });
});

describe('promptsOf', () => {
  // A Claude Code session: two typed messages in a row, a later prompt whose answer runs through a
  // compaction (its summary, then the harness's "continue"), an empty user message, and one more prompt.
  const messages: Message[] = [
    user('Fix the failing test'), // 0
    user('It is in src/a.test.ts'), // 1
    calls('t1', 'Read', { file_path: '/repo/src/a.test.ts' }), // 2: turn 0
    answers('t1', 'test body'), // 3
    said('Fixed.'), // 4: turn 1
    user('Now add a test for b'), // 5
    calls('t2', 'Write', { file_path: '/repo/src/b.test.ts', content: 'x' }), // 6: turn 2
    answers('t2', 'written'), // 7
    user('This session is being continued from a previous conversation. Summary: …', {
      compaction: true,
      injected: true,
    }), // 8
    user('continue', { injected: true }), // 9
    calls('t3', 'Bash', { command: 'npm test' }), // 10: turn 3
    answers('t3', 'ok'), // 11
    user(''), // 12
    said('All green.'), // 13: turn 4
    { role: 'assistant', parts: [{ type: 'text', text: 'API Error' }], injected: true, source: at() }, // 14
    user('Thanks. Update the docs too'), // 15
    said('Updated.'), // 16: turn 5
  ];

  it('merges consecutive typed messages, leaves out harness and compaction text, and gives each turn to the prompt before it', () => {
    const recorded = [...turns(messages, 0)];
    expect(recorded.map((turn) => turn.messageIndex)).toEqual([2, 4, 6, 10, 13, 16]);
    expect(promptsOf(messages, 0, recorded)).toEqual([
      { text: 'Fix the failing test\n\nIt is in src/a.test.ts', turns: [0, 1] },
      // The turns after the compaction and the injected "continue" still answer this prompt.
      { text: 'Now add a test for b', turns: [2, 3, 4] },
      { text: 'Thanks. Update the docs too', turns: [5] },
    ]);
  });

  it('does not merge typed messages an assistant message stands between', () => {
    const session = [user('one'), said('1'), user('two'), user('three'), said('2')];
    expect(promptsOf(session, 0, [...turns(session)])).toEqual([
      { text: 'one', turns: [0] },
      { text: 'two\n\nthree', turns: [1] },
    ]);
  });

  it('joins the text parts of one message, and skips a message with only whitespace or no text', () => {
    const session: Message[] = [
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'Look at this' },
          { type: 'image', mediaType: 'image/png', data: 'AAAA' },
          { type: 'text', text: 'screenshot' },
        ],
        source: at(),
      },
      said('I see.'),
      { role: 'user', parts: [{ type: 'image', mediaType: 'image/png', data: 'BBBB' }], source: at() },
      user('   \n'),
      said('Anything else?'),
    ];
    expect(promptsOf(session, 0, [...turns(session)])).toEqual([
      {
        text: 'Look at this\nscreenshot',
        turns: [0, 1],
        // Its image goes to opencode as a file; the one sent alone after an answer has no text to go with.
        images: [{ mediaType: 'image/png', data: 'AAAA' }],
      },
    ]);
  });

  it('gives an image sent right after a typed message to that prompt', () => {
    const session: Message[] = [
      user('What is wrong here?'),
      { role: 'user', parts: [{ type: 'image', mediaType: 'image/jpeg', data: 'CCCC' }], source: at() },
      said('A typo.'),
    ];
    expect(promptsOf(session, 0, [...turns(session)])).toEqual([
      { text: 'What is wrong here?', turns: [0], images: [{ mediaType: 'image/jpeg', data: 'CCCC' }] },
    ]);
  });

  it('starts at `own`: inherited prompts are not replayed, and no prompt at all gives none', () => {
    const session = [user('old prompt'), said('old answer'), user('new prompt'), said('new answer')];
    const own = 2;
    const recorded = [...turns(session, own)];
    const prompts = promptsOf(session, own, recorded);
    expect(prompts.map((prompt) => prompt.text)).toEqual(['new prompt']);
    // Positions in the list given, not Turn.index (which counts the inherited turn too): the driver looks the
    // recorded answer up in that list, so an index would point past its end.
    expect(recorded.map((turn) => turn.index)).toEqual([1]);
    expect(prompts[0]?.turns).toEqual([0]);
    expect(recorded[prompts[0]?.turns[0] as number]?.response).toBe(session[3]);

    const injectedOnly = [user('<system-reminder>', { injected: true }), said('ok')];
    expect(promptsOf(injectedOnly, 0, [...turns(injectedOnly)])).toEqual([]);
  });
});

describe('rebase', () => {
  it('moves strings equal to or under `from` to `to`', () => {
    expect(rebase('/a/b', '/a/b', '/w')).toBe('/w');
    expect(rebase('/a/b/src/x.ts', '/a/b', '/w')).toBe('/w/src/x.ts');
    expect(rebase('/a/b/', '/a/b', '/w/ws')).toBe('/w/ws/');
  });

  it('leaves a path that only shares a prefix, a relative path, and a path merely mentioning `from`', () => {
    expect(rebase('/a/bc', '/a/b', '/w')).toBe('/a/bc');
    expect(rebase('/a/bc/d', '/a/b', '/w')).toBe('/a/bc/d');
    expect(rebase('src/x.ts', '/a/b', '/w')).toBe('src/x.ts');
    expect(rebase('cat /a/b/x', '/a/b', '/w')).toBe('cat /a/b/x');
  });

  it('rewrites inside nested arrays and objects, leaves non-strings as they are, and does not change its input', () => {
    const input = {
      filePath: '/a/b/x.ts',
      offset: 3,
      replaceAll: true,
      nothing: null,
      list: ['/a/b', ['/a/b/y', '/a/bc', 7]],
      nested: { deeper: { path: '/a/b/z', keep: '/elsewhere' } },
    };
    const copy = structuredClone(input);
    expect(rebase(input, '/a/b', '/w')).toEqual({
      filePath: '/w/x.ts',
      offset: 3,
      replaceAll: true,
      nothing: null,
      list: ['/w', ['/w/y', '/a/bc', 7]],
      nested: { deeper: { path: '/w/z', keep: '/elsewhere' } },
    });
    expect(input).toEqual(copy);
    expect(rebase(42, '/a/b', '/w')).toBe(42);
    expect(rebase(undefined, '/a/b', '/w')).toBeUndefined();
  });

  it('is the identity (the same value) when from and to are the same', () => {
    const input = { filePath: '/a/b/x.ts' };
    expect(rebase(input, '/a/b', '/a/b')).toBe(input);
  });
});
