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
type Rule = (args: Args) => RecordedName[];

/** Copies the named arguments under new names, leaving out absent ones. */
function rename(name: string, fields: Record<string, string>, extra: Args = {}): Rule {
  return (args) => {
    const input: Args = {};
    for (const [from, to] of Object.entries(fields)) if (args[from] !== undefined) input[to] = args[from];
    return [{ name, input: { ...input, ...extra } }];
  };
}

const claudeCode: Record<string, Rule> = {
  read: rename('Read', { filePath: 'file_path', offset: 'offset', limit: 'limit' }),
  write: rename('Write', { filePath: 'file_path', content: 'content' }),
  edit: rename('Edit', {
    filePath: 'file_path',
    oldString: 'old_string',
    newString: 'new_string',
    replaceAll: 'replace_all',
  }),
  bash: rename('Bash', { command: 'command', timeout: 'timeout', description: 'description' }),
  glob: rename('Glob', { pattern: 'pattern', path: 'path' }),
  grep: rename('Grep', { pattern: 'pattern', path: 'path', include: 'glob' }),
  // opencode's sub-agent is `general`; Claude Code's is `general-purpose`.
  task: (args) => [
    {
      name: 'Task',
      input: {
        description: args.description,
        prompt: args.prompt,
        subagent_type: args.subagent_type === 'general' ? 'general-purpose' : args.subagent_type,
      },
    },
  ],
  // webfetch (Claude's takes a prompt, opencode's a format) and todowrite (different item fields) have no
  // faithful counterpart: their calls are misses.
};

/** Codex runs everything through a shell: the recording holds one of its shell tools. */
const codex: Record<string, Rule> = {
  bash: (args) => {
    const command = String(args.command ?? '');
    return [
      { name: 'exec_command', input: { cmd: command } },
      { name: 'shell_command', input: { command } },
      { name: 'shell', input: { command: ['bash', '-lc', command] } },
    ];
  },
};

const dockerAgent: Record<string, Rule> = {
  read: rename('read_file', { filePath: 'path' }),
  write: rename('write_file', { filePath: 'path', content: 'content' }),
  bash: rename('shell', { command: 'cmd' }),
  webfetch: (args) => [{ name: 'fetch', input: { urls: [args.url] } }],
};

const tables: Record<string, Record<string, Rule>> = {
  'claude-code': claudeCode,
  codex,
  'docker-agent': dockerAgent,
};

/** The source agents whose sessions have a table (opencode's own need none). */
export const mappedAgents = Object.keys(tables);

/**
 * The calls of the recording an opencode call may stand for, most likely first. opencode's own sessions:
 * the call itself. Another agent's: by its table, or none (a miss).
 */
export function recordedNames(agent: string, tool: string, args: unknown): RecordedName[] {
  if (agent === 'opencode') return [{ name: tool, input: args }];
  const rule = tables[agent]?.[tool];
  if (!rule) return [];
  return rule(args && typeof args === 'object' ? (args as Args) : {});
}

/** The opencode tool a recorded call would be made with, for the reverse direction (figures). */
export function opencodeName(agent: string, recorded: string): string | undefined {
  if (agent === 'opencode') return recorded;
  const table = tables[agent];
  if (!table) return undefined;
  for (const [tool, rule] of Object.entries(table)) {
    if (rule({}).some((call) => call.name === recorded)) return tool;
  }
  return undefined;
}
