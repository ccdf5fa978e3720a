// Sessions of other agents replayed through opencode: opencode's model calls opencode's tools (`read`,
// `bash`, …), the recording holds the source agent's (`Read`, `Bash`, …). One table per source agent turns an
// opencode call into the call(s) the recording may hold, tried in order; a call with no mapping is a miss.
// Pure: the answer is looked up in the recording, nothing else.

/** A call as the recording names it. */
export interface RecordedName {
  name: string;
  input: unknown;
}

type Args = Record<string, unknown>;

/**
 * One opencode tool and the recorded tool it stands for: argument names opencode → recorded, and, where
 * values differ too, how to turn them each way. Both directions come from the same entry: an opencode call is
 * looked up in the recording with `forward`, and a recorded call is offered to opencode (`--model recorded`
 * on another agent's session) with `backward`.
 */
interface Entry {
  opencode: string;
  recorded: string;
  fields: Record<string, string>;
  /** Adjusts the renamed arguments, opencode → recorded. */
  forward?: (input: Args) => Args;
  /** Adjusts the renamed arguments, recorded → opencode. */
  backward?: (input: Args) => Args;
  /** A recorded call with an argument outside `fields` has no counterpart (renaming would drop what it did). */
  strict?: boolean;
}

const subagent = (from: string, to: string) => (input: Args) =>
  input.subagent_type === from ? { ...input, subagent_type: to } : input;

const claudeCode: Entry[] = [
  { opencode: 'read', recorded: 'Read', fields: { filePath: 'file_path', offset: 'offset', limit: 'limit' } },
  { opencode: 'write', recorded: 'Write', fields: { filePath: 'file_path', content: 'content' } },
  {
    opencode: 'edit',
    recorded: 'Edit',
    fields: {
      filePath: 'file_path',
      oldString: 'old_string',
      newString: 'new_string',
      replaceAll: 'replace_all',
    },
  },
  {
    opencode: 'bash',
    recorded: 'Bash',
    fields: { command: 'command', timeout: 'timeout', description: 'description' },
    // opencode requires a description; a recorded call without one is offered with an empty one, which is
    // not part of the call looked up.
    forward: ({ description, ...rest }) =>
      description === '' || description === undefined ? rest : { ...rest, description },
    backward: (input) => ({ description: '', ...input }),
  },
  { opencode: 'glob', recorded: 'Glob', fields: { pattern: 'pattern', path: 'path' } },
  { opencode: 'grep', recorded: 'Grep', fields: { pattern: 'pattern', path: 'path', include: 'glob' } },
  // opencode's sub-agent is `general`; Claude Code's is `general-purpose`.
  {
    opencode: 'task',
    recorded: 'Task',
    fields: { description: 'description', prompt: 'prompt', subagent_type: 'subagent_type' },
    forward: subagent('general', 'general-purpose'),
    backward: subagent('general-purpose', 'general'),
  },
  // webfetch (Claude's takes a prompt, opencode's a format) and todowrite (different item fields) have no
  // faithful counterpart: their calls are misses.
];

const dockerAgent: Entry[] = [
  { opencode: 'read', recorded: 'read_file', fields: { filePath: 'path' } },
  { opencode: 'write', recorded: 'write_file', fields: { filePath: 'path', content: 'content' } },
  {
    opencode: 'bash',
    recorded: 'shell',
    fields: { command: 'cmd' },
    forward: (input) => input,
    backward: (input) => ({ description: '', ...input }),
  },
  {
    opencode: 'webfetch',
    recorded: 'fetch',
    fields: { url: 'urls' },
    forward: ({ urls, ...rest }) => (urls === undefined ? rest : { ...rest, urls: [urls] }),
    backward: ({ url, ...rest }) =>
      Array.isArray(url) && url.length === 1
        ? { ...rest, url: url[0], format: 'markdown' }
        : { ...rest, url },
  },
];

// Gemini CLI and Qwen Code (a fork of it) name their shell and whole-file write alike: `run_shell_command
// {command, description}` and `write_file {file_path, content}`. Their reads (`start_line`/`end_line` against
// `offset`/`limit`), edits (Gemini's `replace` takes an `instruction`) and searches differ in what they do, so
// only these two are mapped. A recorded call with an argument the table does not carry (a shell call's
// `dir_path` or `is_background`) has no exact counterpart: `strict`.
const geminiLineage: Entry[] = [
  {
    opencode: 'bash',
    recorded: 'run_shell_command',
    fields: { command: 'command', description: 'description' },
    forward: ({ description, ...rest }) =>
      description === '' || description === undefined ? rest : { ...rest, description },
    backward: (input) => ({ description: '', ...input }),
    strict: true,
  },
  {
    opencode: 'write',
    recorded: 'write_file',
    fields: { filePath: 'file_path', content: 'content' },
    strict: true,
  },
];

/** Renames the arguments that are present; the others are left out. */
function rename(args: Args, fields: Record<string, string>): Args {
  const out: Args = {};
  for (const [from, to] of Object.entries(fields)) if (args[from] !== undefined) out[to] = args[from];
  return out;
}

const flip = (fields: Record<string, string>) =>
  Object.fromEntries(Object.entries(fields).map(([from, to]) => [to, from]));

const tables: Record<string, Entry[]> = {
  'claude-code': claudeCode,
  'docker-agent': dockerAgent,
  gemini: geminiLineage,
  qwen: geminiLineage,
};

const asArgs = (value: unknown): Args =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {};

/** Codex runs everything through a shell: the recording holds one of its shell tools. */
function codexForward(tool: string, args: Args): RecordedName[] {
  if (tool !== 'bash') return [];
  const command = String(args.command ?? '');
  return [
    { name: 'exec_command', input: { cmd: command } },
    { name: 'shell_command', input: { command } },
    { name: 'shell', input: { command: ['bash', '-lc', command] } },
  ];
}

function codexBackward(name: string, input: Args): RecordedName | undefined {
  let command: unknown;
  if (name === 'exec_command') command = input.cmd;
  else if (name === 'shell_command') command = input.command;
  else if (name === 'shell' && Array.isArray(input.command)) {
    const argv = input.command as unknown[];
    command = argv.length === 3 && argv[1] === '-lc' ? argv[2] : argv.join(' ');
  }
  return typeof command === 'string' ? { name: 'bash', input: { command, description: '' } } : undefined;
}

/** The source agents whose sessions have a table (opencode's own need none). */
export const mappedAgents = [...Object.keys(tables), 'codex'];

/**
 * The calls of the recording an opencode call may stand for, most likely first. opencode's own sessions:
 * the call itself. Another agent's: by its table, or none (a miss).
 */
export function recordedNames(agent: string, tool: string, args: unknown): RecordedName[] {
  if (agent === 'opencode') return [{ name: tool, input: args }];
  if (agent === 'codex') return codexForward(tool, asArgs(args));
  const entry = tables[agent]?.find((candidate) => candidate.opencode === tool);
  if (!entry) return [];
  const input = rename(asArgs(args), entry.fields);
  return [{ name: entry.recorded, input: entry.forward ? entry.forward(input) : input }];
}

/**
 * A recorded call as opencode's model would make it (`--model recorded` on another agent's session), or
 * undefined when opencode has no such tool: offered as it is, opencode answers it as an unknown tool.
 */
export function opencodeCall(agent: string, name: string, input: unknown): RecordedName | undefined {
  if (agent === 'opencode') return { name, input };
  if (agent === 'codex') return codexBackward(name, asArgs(input));
  const entry = tables[agent]?.find((candidate) => candidate.recorded === name);
  if (!entry) return undefined;
  const recorded = asArgs(input);
  const known = new Set(Object.values(entry.fields));
  if (entry.strict && Object.keys(recorded).some((field) => !known.has(field))) return undefined;
  const args = rename(recorded, flip(entry.fields));
  return { name: entry.opencode, input: entry.backward ? entry.backward(args) : args };
}
