// Hand-built samples for the format tests and golden files: each shows one thing a renderer must get right.
// Changing one changes the golden files (regenerate with UPDATE_GOLDEN=1 and read the diff).
import type {
  AssistantMessage,
  Sample,
  SampleCall,
  SampleMessage,
  SampleTool,
  ToolMessage,
} from '../../src/export/sample.js';

const system = (content: string): SampleMessage => ({ role: 'system', content });
const user = (content: string): SampleMessage => ({ role: 'user', content });

function assistant(
  content: string,
  train: boolean,
  calls: SampleCall[] = [],
  reasoning?: string,
): AssistantMessage {
  return { role: 'assistant', content, ...(reasoning ? { reasoning } : {}), calls, train };
}

const call = (id: string, name: string, args: Record<string, unknown>): SampleCall => ({
  id,
  name,
  arguments: args,
});

const result = (callId: string, name: string, content: string, isError = false): ToolMessage => ({
  role: 'tool',
  callId,
  name,
  content,
  isError,
});

const bash: SampleTool = {
  name: 'Bash',
  description: 'Run a shell command',
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};
const read: SampleTool = {
  name: 'Read',
  description: 'Read a file',
  parameters: {
    type: 'object',
    properties: { file_path: { type: 'string' }, limit: { type: 'integer' } },
    required: ['file_path'],
  },
};
const grep: SampleTool = {
  name: 'Grep',
  description: 'Search file contents with a regular expression',
  parameters: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
};
const edit: SampleTool = {
  name: 'Edit',
  description: 'Replace text in a file',
  parameters: {
    type: 'object',
    properties: {
      file_path: { type: 'string' },
      old_string: { type: 'string' },
      new_string: { type: 'string' },
    },
    required: ['file_path', 'old_string', 'new_string'],
  },
};
const tools = [bash, read, grep, edit];

function sample(name: string, messages: SampleMessage[], extra: Partial<Sample> = {}): Sample {
  return {
    id: `s-${name}:session:1`,
    session: `s-${name}`,
    agent: 'claude-code',
    unit: 'session',
    messages,
    tools,
    ...extra,
  };
}

/** Supervised samples: the conversation ends with an assistant message and its `train` flags are set. */
export const sftSamples: Sample[] = [
  sample(
    'plain-chat',
    [user('What does `git rebase -i` do?'), assistant('It lets you reorder, squash or edit commits.', true)],
    { tools: [] },
  ),
  // The running example of the notes: system prompt, text beside a call, only the final answer trained.
  sample('text-and-call', [
    system('You are a coding agent.'),
    user('List files'),
    assistant("I'll list them.", false, [call('call_1', 'Bash', { command: 'ls' })]),
    result('call_1', 'Bash', 'a.txt\nb.txt'),
    assistant('Two files.', true),
  ]),
  sample('call-only', [
    user('What is the package name?'),
    assistant('', true, [call('toolu_01', 'Read', { file_path: '/repo/package.json' })]),
    result('toolu_01', 'Read', '{"name": "todo-api"}'),
    assistant('It is `todo-api`.', true),
  ]),
  sample('parallel-calls', [
    user('Where is `login` defined and what does the README say about it?'),
    assistant('', false, [
      call('toolu_a', 'Grep', { pattern: 'function login' }),
      call('toolu_b', 'Read', { file_path: 'README.md', limit: 40 }),
    ]),
    result('toolu_a', 'Grep', 'src/auth.ts:12:export function login('),
    result('toolu_b', 'Read', '# todo-api\nLogin with POST /login.'),
    assistant('`login` is in src/auth.ts:12; the README documents POST /login.', true),
  ]),
  sample('error-result', [
    user('Run the tests and fix what fails.'),
    assistant('', true, [call('t1', 'Bash', { command: 'npm test' })]),
    result('t1', 'Bash', 'FAIL test/app.test.ts\nExpected 200, received 500', true),
    assistant('The handler throws; fixing it.', true, [
      call('t2', 'Edit', {
        file_path: 'src/app.ts',
        old_string: 'throw err',
        new_string: 'return next(err)',
      }),
    ]),
    result('t2', 'Edit', 'The file src/app.ts has been updated.'),
    assistant('', true, [call('t3', 'Bash', { command: 'npm test' })]),
    result('t3', 'Bash', 'PASS test/app.test.ts'),
    assistant('All tests pass.', true),
  ]),
  // A call whose arguments never parsed, the tool's complaint, and the model's corrected call.
  sample('raw-arguments', [
    user('List everything, hidden files too.'),
    assistant('', false, [{ id: 'r1', name: 'Bash', arguments: {}, raw: '{"command": "ls -la' }]),
    result('r1', 'Bash', 'InputValidationError: arguments are not valid JSON', true),
    assistant('', true, [call('r2', 'Bash', { command: 'ls -la' })]),
    result('r2', 'Bash', '.env\napp.ts'),
    assistant('Two entries: .env and app.ts.', true),
  ]),
  sample('reasoning', [
    user('Is 2^31 - 1 prime?'),
    assistant(
      'Yes: 2147483647 is a Mersenne prime.',
      true,
      [],
      'It is M31, which Euler proved prime in 1772.',
    ),
  ]),
  // Trained messages that are not only the final ones (a replay from the second user turn on).
  sample('mixed-train', [
    user('Hi'),
    assistant('Hello! What are we working on?', false),
    user('Count the lines of app.ts'),
    assistant('', true, [call('m1', 'Bash', { command: 'wc -l app.ts' })], 'wc -l is enough.'),
    result('m1', 'Bash', '42 app.ts'),
    assistant('app.ts has 42 lines.', true),
  ]),
  sample('consecutive-users', [
    user('Fix the bug in app.ts'),
    user("It's in the login handler."),
    assistant('Looking at the login handler now.', true),
  ]),
  sample('unicode', [
    system('Réponds en français. 日本語も可。'),
    user('Cherche « ñandú » 🦆 — e\u0301 vs é, line\u2028separator'),
    assistant('', false, [call('u1', 'Grep', { pattern: 'ñandú|🦆' })]),
    result('u1', 'Grep', 'docs/שלום.md:1:ñandú 🦆'),
    assistant('Trouvé dans docs/שלום.md ✓ — 👋🏽', true),
  ]),
  // A user message right after a tool result (typed while the tool ran): ShareGPT cannot alternate that.
  sample('tool-then-user', [
    user('Install the dependencies.'),
    assistant('', false, [call('i1', 'Bash', { command: 'npm install' })]),
    result('i1', 'Bash', '[Request interrupted by user for tool use]', true),
    user('Use pnpm, not npm.'),
    assistant('', true, [call('i2', 'Bash', { command: 'pnpm install' })]),
    result('i2', 'Bash', 'Done in 2.1s'),
    assistant('Installed with pnpm.', true),
  ]),
  // A model-turn sample whose answer is a call (its result is not part of the sample).
  sample(
    'ends-with-call',
    [
      user('What changed?'),
      assistant('Checking git.', true, [call('e1', 'Bash', { command: 'git status --short' })]),
    ],
    { id: 's-ends-with-call:model-turn:1', unit: 'model-turn' },
  ),
  sample('nothing-to-train', [user('Thanks!'), assistant('You are welcome.', false)]),
];

const context: SampleMessage[] = [
  system('You are a coding agent.'),
  user('Why does the build fail?'),
  assistant('', false, [call('p1', 'Bash', { command: 'npm run build' })]),
  result('p1', 'Bash', "src/app.ts(3,1): error TS2304: Cannot find name 'expres'."),
];

function preference(name: string, chosen: AssistantMessage, rejected: AssistantMessage): Sample {
  return sample(name, context, {
    id: `s-${name}:model-turn:2`,
    unit: 'model-turn',
    preference: { chosen, rejected },
  });
}

/** dpo samples: `messages` is the prompt, the pair the original (chosen) and replayed (rejected) turns. */
export const preferenceSamples: Sample[] = [
  preference(
    'pref-text-vs-call',
    assistant('A typo: `expres` should be `express` on line 3 of src/app.ts.', true),
    assistant('', true, [call('q1', 'Bash', { command: 'rm -rf node_modules && npm install' })]),
  ),
  preference(
    'pref-calls',
    assistant('', true, [call('c1', 'Read', { file_path: 'src/app.ts', limit: 5 })], 'Look at line 3 first.'),
    assistant('', true, [call('c2', 'Grep', { pattern: 'expres\\b' })]),
  ),
  // Same call under another id: not a preference.
  preference(
    'pref-same',
    assistant('', true, [call('d1', 'Read', { limit: 5, file_path: 'src/app.ts' })]),
    assistant('', true, [call('d2', 'Read', { file_path: 'src/app.ts', limit: 5 })]),
  ),
  preference(
    'pref-reasoning-only',
    assistant('Line 3 has a typo.', true, [], 'The error names expres.'),
    assistant('Line 3 has a typo.', true, [], 'Probably a missing import.'),
  ),
];

export const allSamples: Sample[] = [...sftSamples, ...preferenceSamples];

export function byName(name: string): Sample {
  const found = allSamples.find((s) => s.session === `s-${name}`);
  if (!found) throw new Error(`no sample ${name}`);
  return found;
}
