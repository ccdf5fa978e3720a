// Claude Code's built-in tools. Claude Code publishes no source, so the names, parameter names and types come from
// what real transcripts and public parsers show; every description below is ours.
//
// Read:
// - /work/shared/fixtures/claude-code/*.jsonl (and subagents/): the tool_use inputs of real transcripts, Claude Code
//   2.1.38 and 2.1.39 (marot/spotter test/fixtures/transcripts @035dfd36 and @0c7102a3), plus the hand-written
//   daaain/claude-code-log test_data files modelled on 2.1.173 (parallel `Agent` calls).
// - /work/shared/fixtures/claude-code/schema/session.schema.v2.1.144.json (oneryalcin/agent-schemas
//   claude-code/v2.1.144/session.schema.json @623971f0): `$defs.BuiltInToolName` and every `*Input` definition,
//   validated there against the tool list Claude Code 2.1.144 sends to the API. This is the main source for the
//   2.1.x tools (Task*, Team*, Cron*, Worktree, Monitor, ScheduleWakeup, PowerShell, RemoteTrigger, SendUserFile…).
// - daaain/claude-code-log claude_code_log/models.py (stored version @05cc97e4), "Tool Input Models": MultiEdit's
//   edits, ExitPlanMode's `plan`, Task's `resume`, TodoWrite items, Skill, Monitor, Cron*.
// - A public copy of the Claude Agent SDK's generated sdk-tools.d.ts (dumped 2025-10-18): BashOutputInput
//   {bash_id, filter}, KillShellInput {shell_id}, ExitPlanModeInput {plan}, GrepInput, NotebookEditInput,
//   ListMcpResourcesInput, ReadMcpResourceInput.
// - Third-party type maps that name the tools missing from the SDK types: LS {path, ignore?}, TodoRead {},
//   KillBash {shell_id} (KillShell's older name), SlashCommand {command}, NotebookRead {notebook_path, cell_id?}.
//
// The catalogue is the union over versions (catalogue(agent) has no version): a tool renamed or removed upstream
// (LS, MultiEdit, BashOutput, KillBash, TodoRead, NotebookRead, SlashCommand; Task → Agent) stays, so replaying an
// older session offers what that agent had. Platform-gated tools (PowerShell, RemoteTrigger, SendUserFile) are
// real built-ins and are listed too.

import {
  choice,
  either,
  flag,
  integer,
  list,
  number,
  object,
  record,
  text,
  tool,
  withDefault,
} from './schema.js';
import type { JsonSchema, ToolSpec } from './types.js';

const subagentParameters: JsonSchema = object(
  {
    description: text('A few words naming the task, shown to the user.'),
    prompt: text('Everything the sub-agent needs to do the task on its own, and what it should report back.'),
    subagent_type: text('Which kind of sub-agent to start (one of the agent types the session offers).'),
    model: choice(['sonnet', 'opus', 'haiku'], 'Run the sub-agent on this model instead of the current one.'),
    run_in_background: flag('Return at once and let the sub-agent work in the background.'),
    name: text('Name of the teammate to start (agent teams).'),
    team_name: text('Team the new teammate joins (agent teams).'),
    mode: choice(
      ['acceptEdits', 'bypassPermissions', 'default', 'dontAsk', 'plan', 'auto'],
      'Permission mode for the sub-agent.',
    ),
    isolation: choice(['worktree'], 'Run the sub-agent in its own git worktree.'),
    resume: text('Id of an earlier sub-agent to continue instead of starting a new one.'),
  },
  ['description', 'prompt'],
);

const shellParameters = (shell: string): JsonSchema =>
  object(
    {
      command: text(`The ${shell} command to run.`),
      description: text('Five to ten words saying what the command does.'),
      timeout: withDefault(
        number('Give up after this many milliseconds (at most 600000; 120000 by default).'),
        120000,
      ),
      run_in_background: flag(
        'Start the command and return at once; read its output later with its task id.',
      ),
      dangerouslyDisableSandbox: flag('Run outside the sandbox.'),
    },
    ['command'],
  );

const todoItem = object(
  {
    content: text('What needs doing, in the imperative.'),
    status: choice(['pending', 'in_progress', 'completed']),
    activeForm: text('The same step in the present continuous, shown while it runs.'),
  },
  ['content', 'status', 'activeForm'],
);

const question = object(
  {
    question: text('The question, ending with a question mark.'),
    header: text('A very short label for the question (at most 12 characters).'),
    options: list(
      object(
        {
          label: text('The choice as the user sees it.'),
          description: text('What picking this choice means.'),
          markdown: text('Optional preview shown next to the choice.'),
        },
        ['label', 'description'],
      ),
      'Two to four choices.',
    ),
    multiSelect: flag('Let the user pick more than one choice.'),
  },
  ['question', 'header', 'options', 'multiSelect'],
);

export const claudeCodeTools: readonly ToolSpec[] = [
  tool(
    'Read',
    'Read a file from the local filesystem and return it with line numbers. Also shows images, PDFs and notebooks.',
    object(
      {
        file_path: text('Absolute path of the file.'),
        offset: integer('Line to start reading at, for files too long to read at once.'),
        limit: integer('How many lines to read.'),
        pages: text('Pages of a PDF to read, such as "1-5".'),
      },
      ['file_path'],
    ),
    true,
  ),
  tool(
    'Write',
    'Create a file, or replace the whole content of an existing one.',
    object(
      {
        file_path: text('Absolute path of the file.'),
        content: text('The complete new content.'),
      },
      ['file_path', 'content'],
    ),
    false,
  ),
  tool(
    'Edit',
    'Replace an exact piece of text in a file with new text. The old text must occur once unless replace_all is set.',
    object(
      {
        file_path: text('Absolute path of the file.'),
        old_string: text('The exact text to replace.'),
        new_string: text('The text to put in its place.'),
        replace_all: withDefault(flag('Replace every occurrence instead of exactly one.'), false),
      },
      ['file_path', 'old_string', 'new_string'],
    ),
    false,
  ),
  tool(
    'MultiEdit',
    'Apply several exact-text replacements to one file in order, all or none.',
    object(
      {
        file_path: text('Absolute path of the file.'),
        edits: list(
          object(
            {
              old_string: text('The exact text to replace.'),
              new_string: text('The text to put in its place.'),
              replace_all: flag('Replace every occurrence instead of exactly one.'),
            },
            ['old_string', 'new_string'],
          ),
          'The replacements, applied one after the other.',
        ),
      },
      ['file_path', 'edits'],
    ),
    false,
  ),
  tool(
    'Bash',
    'Run a shell command in a persistent bash session and return its output.',
    shellParameters('bash'),
    false,
  ),
  tool(
    'PowerShell',
    'Run a PowerShell command (Windows) and return its output.',
    shellParameters('PowerShell'),
    false,
  ),
  tool(
    'BashOutput',
    'Read the output a background shell has produced since the last read.',
    object(
      {
        bash_id: text('Id of the background shell.'),
        filter: text('Regular expression; only matching lines are returned.'),
      },
      ['bash_id'],
    ),
    true,
  ),
  tool(
    'KillShell',
    'Stop a background shell.',
    object({ shell_id: text('Id of the background shell.') }, ['shell_id']),
    false,
  ),
  tool(
    'KillBash',
    'Stop a background shell (the older name of KillShell).',
    object({ shell_id: text('Id of the background shell.') }, ['shell_id']),
    false,
  ),
  tool(
    'Glob',
    'Find files whose paths match a glob pattern, newest first.',
    object(
      {
        pattern: text('Glob pattern such as "src/**/*.ts".'),
        path: text('Directory to search in; the working directory when left out.'),
      },
      ['pattern'],
    ),
    true,
  ),
  tool(
    'Grep',
    'Search file contents with a regular expression (ripgrep). Returns matching files, lines or counts.',
    object(
      {
        pattern: text('Regular expression to look for.'),
        path: text('File or directory to search; the working directory when left out.'),
        glob: text('Only search files matching this glob.'),
        type: text('Only search files of this ripgrep type, such as "js" or "py".'),
        output_mode: withDefault(
          choice(['content', 'files_with_matches', 'count'], 'What to return; files by default.'),
          'files_with_matches',
        ),
        head_limit: integer('Return at most this many lines or entries.'),
        offset: integer('Skip this many lines or entries first.'),
        multiline: withDefault(flag('Let the pattern span lines.'), false),
        context: integer('Lines of context around each match.'),
        '-A': integer('Lines of context after each match.'),
        '-B': integer('Lines of context before each match.'),
        '-C': integer('Lines of context around each match.'),
        '-i': withDefault(flag('Ignore case.'), false),
        '-n': flag('Show line numbers.'),
        '-o': flag('Show only the matching part of each line.'),
      },
      ['pattern'],
    ),
    true,
  ),
  tool(
    'LS',
    'List the files and directories in a directory.',
    object(
      {
        path: text('Absolute path of the directory.'),
        ignore: list(text(), 'Glob patterns of entries to leave out.'),
      },
      ['path'],
    ),
    true,
  ),
  tool(
    'WebFetch',
    'Fetch a web page and answer a prompt about its content.',
    object(
      {
        url: text('The address to fetch.'),
        prompt: text('What to find out from the page.'),
      },
      ['url', 'prompt'],
    ),
    true,
  ),
  tool(
    'WebSearch',
    'Search the web and return result titles, links and snippets.',
    object(
      {
        query: text('The search terms.'),
        allowed_domains: list(text(), 'Only return results from these domains.'),
        blocked_domains: list(text(), 'Never return results from these domains.'),
      },
      ['query'],
    ),
    true,
  ),
  tool(
    'Task',
    'Start a sub-agent that works on a task with its own context and reports back when done.',
    subagentParameters,
    false,
  ),
  tool(
    'Agent',
    'Start a sub-agent that works on a task with its own context and reports back when done (newer name of Task).',
    subagentParameters,
    false,
  ),
  tool(
    'TaskOutput',
    'Read the output of a background task (a background shell or sub-agent), optionally waiting for it to finish.',
    object(
      {
        task_id: text('Id of the background task.'),
        block: flag('Wait until the task finishes.'),
        timeout: number('Longest wait in milliseconds.'),
      },
      ['task_id'],
    ),
    true,
  ),
  tool(
    'TaskStop',
    'Stop a background task.',
    object({
      task_id: text('Id of the background task.'),
      shell_id: text('Id of the background shell (older name of task_id).'),
    }),
    false,
  ),
  tool(
    'TodoWrite',
    'Replace the session to-do list, used to plan and track the steps of the current work.',
    object({ todos: list(todoItem, 'The whole updated list.') }, ['todos']),
    false,
  ),
  tool('TodoRead', 'Show the current session to-do list.', object({}), true),
  tool(
    'NotebookEdit',
    'Replace, insert or delete one cell of a Jupyter notebook.',
    object(
      {
        notebook_path: text('Absolute path of the notebook.'),
        new_source: text('The new source of the cell.'),
        cell_id: text('Id of the cell to change; a new cell goes after it.'),
        cell_type: choice(['code', 'markdown'], 'Kind of cell; needed when inserting.'),
        edit_mode: choice(['replace', 'insert', 'delete'], 'What to do with the cell; replace by default.'),
      },
      ['notebook_path', 'new_source'],
    ),
    false,
  ),
  tool(
    'NotebookRead',
    'Read the cells and outputs of a Jupyter notebook.',
    object(
      {
        notebook_path: text('Absolute path of the notebook.'),
        cell_id: text('Read only this cell.'),
      },
      ['notebook_path'],
    ),
    true,
  ),
  tool(
    'ExitPlanMode',
    'Present the finished plan to the user and ask to leave plan mode and start the work.',
    object({
      plan: text('The plan, in markdown (older releases).'),
      allowedPrompts: list(
        object(
          {
            tool: choice(['Bash']),
            prompt: text('A kind of action the plan needs permission for.'),
          },
          ['tool', 'prompt'],
        ),
        'Permissions the plan asks for up front.',
      ),
    }),
    false,
  ),
  tool(
    'EnterPlanMode',
    'Switch to plan mode: explore and design before changing anything.',
    object({}),
    false,
  ),
  tool(
    'Skill',
    'Load a skill (a packaged set of instructions) into the conversation and follow it.',
    object(
      {
        skill: text('Name of the skill.'),
        args: text('Arguments for the skill.'),
      },
      ['skill'],
    ),
    false,
  ),
  tool(
    'SlashCommand',
    'Run one of the custom slash commands available in this session.',
    object({ command: text('The slash command with its arguments, such as "/review 12".') }, ['command']),
    false,
  ),
  tool(
    'AskUserQuestion',
    'Ask the user one to four multiple-choice questions and wait for the answers.',
    object(
      {
        questions: list(question, 'The questions to ask.'),
        answers: record(text(), 'Answers already collected, by question.'),
        annotations: record(
          object({ markdown: text(), notes: text() }),
          'Notes on the answers, by question.',
        ),
        metadata: object({ source: text() }),
      },
      ['questions'],
    ),
    false,
  ),
  tool(
    'ListMcpResourcesTool',
    'List the resources the connected MCP servers offer.',
    object({ server: text('Only list the resources of this server.') }),
    true,
  ),
  tool(
    'ReadMcpResourceTool',
    'Read one resource from an MCP server.',
    object(
      {
        server: text('Name of the MCP server.'),
        uri: text('URI of the resource.'),
      },
      ['server', 'uri'],
    ),
    true,
  ),
  tool(
    'ToolSearch',
    'Look up deferred tools by name or keyword and load their full definitions so they can be called.',
    object(
      {
        query: text('Keywords, or "select:<tool name>" for one tool.'),
        max_results: number('Return at most this many tools.'),
      },
      ['query'],
    ),
    true,
  ),
  tool(
    'SendMessage',
    'Send a message to a teammate, or answer a shutdown or plan-approval request (agent teams).',
    object(
      {
        to: text('Name of the teammate.'),
        summary: text('A few words summing up the message.'),
        message: either([
          text(),
          object(
            {
              type: choice(['shutdown_request', 'shutdown_response', 'plan_approval_response']),
              request_id: text(),
              approve: flag(),
              reason: text(),
              feedback: text(),
            },
            ['type'],
          ),
        ]),
      },
      ['to', 'message'],
    ),
    false,
  ),
  tool(
    'TaskCreate',
    'Add a task to the shared task board (agent teams).',
    object(
      {
        subject: text('Short title of the task.'),
        description: text('What the task involves.'),
        activeForm: text('The task in the present continuous, shown while it runs.'),
        metadata: record(true),
      },
      ['subject', 'description'],
    ),
    false,
  ),
  tool(
    'TaskUpdate',
    'Change a task on the shared task board: its status, owner, details or dependencies (agent teams).',
    object(
      {
        taskId: text('Id of the task.'),
        status: choice(['pending', 'in_progress', 'completed', 'deleted']),
        subject: text(),
        description: text(),
        activeForm: text(),
        owner: text('Teammate who takes the task.'),
        metadata: record(true),
        addBlocks: list(text(), 'Tasks that cannot start before this one is done.'),
        addBlockedBy: list(text(), 'Tasks that must be done before this one.'),
      },
      ['taskId'],
    ),
    false,
  ),
  tool('TaskList', 'List the tasks on the shared task board (agent teams).', object({}), true),
  tool(
    'TaskGet',
    'Show one task of the shared task board (agent teams).',
    object({ taskId: text('Id of the task.') }, ['taskId']),
    true,
  ),
  tool(
    'TeamCreate',
    'Create a team of agents that share a task board (agent teams).',
    object(
      {
        team_name: text('Name of the new team.'),
        description: text('What the team is for.'),
        agent_type: text('Kind of agent that leads the team.'),
      },
      ['team_name'],
    ),
    false,
  ),
  tool('TeamDelete', 'Remove the current team and its task board (agent teams).', object({}), false),
  tool(
    'EnterWorktree',
    'Move the session into a separate git worktree.',
    object({
      name: text('Name of the worktree.'),
      path: text('Where to create it.'),
    }),
    false,
  ),
  tool(
    'ExitWorktree',
    'Leave the current git worktree, keeping or removing it.',
    object(
      {
        action: choice(['keep', 'remove']),
        discard_changes: flag('Remove the worktree even if it has uncommitted changes.'),
      },
      ['action'],
    ),
    false,
  ),
  tool(
    'CronCreate',
    'Schedule a prompt to be sent at times given by a cron expression.',
    object(
      {
        cron: text('Five-field cron expression in local time.'),
        prompt: text('The prompt to send each time.'),
        recurring: flag('Keep firing until deleted instead of once.'),
        durable: flag('Keep the job across restarts of the session.'),
      },
      ['cron', 'prompt'],
    ),
    false,
  ),
  tool(
    'CronDelete',
    'Cancel a scheduled prompt.',
    object({ id: text('Id of the scheduled job.') }, ['id']),
    false,
  ),
  tool('CronList', 'List the prompts scheduled in this session.', object({}), true),
  tool(
    'Monitor',
    'Run a long-lived command and report each line it prints as it comes.',
    object(
      {
        description: text('What is being watched.'),
        command: text('The shell command to run.'),
        timeout_ms: number('Stop watching after this many milliseconds.'),
        persistent: flag('Keep watching with no time limit.'),
      },
      ['description', 'command'],
    ),
    false,
  ),
  tool(
    'PushNotification',
    "Send a notification to the user's devices.",
    object(
      {
        message: text('The notification text.'),
        status: choice(['proactive']),
      },
      ['message', 'status'],
    ),
    false,
  ),
  tool(
    'ScheduleWakeup',
    'Resume this session after a delay with the given prompt.',
    object(
      {
        delaySeconds: number('How long to wait, in seconds.'),
        reason: text('One line on why, for the user.'),
        prompt: text('The prompt to send on waking.'),
      },
      ['delaySeconds', 'reason', 'prompt'],
    ),
    false,
  ),
  tool(
    'ShareOnboardingGuide',
    "Check, create, update or delete the project's shared onboarding guide.",
    object(
      {
        mode: choice(['check', 'update', 'create', 'delete']),
        short_code: text('Code of an existing guide.'),
      },
      ['mode'],
    ),
    false,
  ),
  tool(
    'WaitForMcpServers',
    'Wait until MCP servers that are still starting are ready.',
    object({ servers: list(text(), 'Names of the servers; all of them when left out.') }),
    false,
  ),
  tool(
    'RemoteTrigger',
    'List, read, create, update or run remote triggers that start this agent.',
    object(
      {
        action: choice(['list', 'get', 'create', 'update', 'run']),
        trigger_id: text('Id of the trigger.'),
        body: record(true, 'Settings of the trigger to create or update.'),
      },
      ['action'],
    ),
    false,
  ),
  tool(
    'SendUserFile',
    'Send files to the user, with an optional caption.',
    object(
      {
        files: list(text(), 'Paths of the files.'),
        caption: text(),
        status: choice(['normal', 'proactive']),
      },
      ['files', 'status'],
    ),
    false,
  ),
];

export const claudeCodeSystemPrompt = [
  "You are a software engineering agent working in the user's repository from a terminal.",
  'Use the tools to read code, search, run commands and edit files; read before you change anything.',
  'Keep changes small and to the point, check them by running the relevant tests, and finish with a short account',
  'of what you did.',
].join(' ');
