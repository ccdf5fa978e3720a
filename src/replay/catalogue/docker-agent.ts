// docker-agent's (formerly cagent) built-in toolsets. Parameter names and types are docker-agent's; every description
// below is ours. A tool's parameters are its Go args struct as tools.MustSchemaFor renders it: a field is required
// unless its json tag says omitempty.
//
// Read (docker/docker-agent, stored versions):
// - pkg/tools/builtin/filesystem/filesystem.go @0c120356: directory_tree, edit_file, list_directory, read_file,
//   read_multiple_files, search_files_content, write_file, create_directory, remove_directory.
// - pkg/tools/builtin/shell/shell.go @10380239: shell {cmd, cwd?, timeout?} and the background jobs.
// - pkg/tools, tools.AddDescriptionParameter (file name not shown by the index): an agent with add_description_parameter adds an
//   optional string `description` to the tools that set AddDescriptionParameter (edit_file, list_directory,
//   search_files_content, write_file and the five shell tools), so recorded calls may carry it.
// - pkg/tools/builtin/think (think {thought}), todo/todo.go @c4c0e97e, memory/memory.go @701b01e5,
//   fetch/fetch.go @7c1086de (a hand-written schema: urls and format required), transfertask/transfertask.go and
//   handoff/handoff.go @7c1086de, skills/skills.go @7c1086de, agent/agent.go and agent/wait.go @7c1086de (background
//   agents), userprompt (user_prompt {message, title?, schema?}).
// - docker/cagent pkg/tools/builtin/*.go, the same tools before the rename.
//
// Read-only is decided here, not from the tools' ReadOnlyHint: docker-agent sets that hint on create_todo,
// update_todos, transfer_task and handoff, which all change state (its own elision PR refuses the hint for the same
// reason). Left out: toolsets whose tools a user defines (script shell, api, openapi, webhook, rag, MCP), the LSP
// and planning toolsets (their schemas were not confirmed), and model switching.

import { choice, flag, integer, list, object, record, text, tool } from './schema.js';
import type { JsonSchema, ToolSpec } from './types.js';

/** The optional parameter tools.AddDescriptionParameter adds. */
const callDescription: Record<string, JsonSchema> = {
  description: text('A few words on what this call is for, shown to the user.'),
};

export const dockerAgentTools: readonly ToolSpec[] = [
  tool(
    'read_file',
    'Read a file; text files can be read from a given line for a given number of lines. Images are shown as images.',
    object(
      {
        path: text('Path of the file, absolute or relative to the working directory.'),
        line: integer('First line to read, counting from 1.'),
        limit: integer('How many lines to read.'),
      },
      ['path'],
    ),
    true,
  ),
  tool(
    'read_multiple_files',
    'Read several files in one call.',
    object(
      {
        paths: list(text(), 'Paths of the files.'),
        json: flag('Return the result as JSON.'),
      },
      ['paths'],
    ),
    true,
  ),
  tool(
    'edit_file',
    'Change a text file by replacing exact pieces of text; each old text must occur exactly once.',
    object(
      {
        path: text('Path of the file.'),
        edits: list(
          object(
            {
              oldText: text('The exact text to replace, with enough context to be unique.'),
              newText: text('The text to put in its place.'),
            },
            ['oldText', 'newText'],
          ),
          'The replacements, applied in order.',
        ),
        ...callDescription,
      },
      ['path', 'edits'],
    ),
    false,
  ),
  tool(
    'write_file',
    'Create a file, or replace the whole content of an existing one.',
    object(
      {
        path: text('Path of the file.'),
        content: text('The complete new content.'),
        ...callDescription,
      },
      ['path', 'content'],
    ),
    false,
  ),
  tool(
    'list_directory',
    'List the files and directories in a directory.',
    object({ path: text('Path of the directory.'), ...callDescription }, ['path']),
    true,
  ),
  tool(
    'directory_tree',
    'Show the files and directories under a directory as a nested JSON tree.',
    object({ path: text('Path of the directory.') }, ['path']),
    true,
  ),
  tool(
    'search_files_content',
    'Search the files under a directory for a piece of text or a regular expression.',
    object(
      {
        path: text('Directory to start from.'),
        query: text('The text or regular expression to look for.'),
        is_regex: flag('Treat the query as a regular expression.'),
        excludePatterns: list(text(), 'Glob patterns of paths to skip.'),
        ...callDescription,
      },
      ['path', 'query'],
    ),
    true,
  ),
  tool(
    'create_directory',
    'Create one or more directories, with any missing parents.',
    object({ paths: list(text(), 'Directories to create.') }, ['paths']),
    false,
  ),
  tool(
    'remove_directory',
    'Remove one or more empty directories.',
    object({ paths: list(text(), 'Directories to remove.') }, ['paths']),
    false,
  ),
  tool(
    'shell',
    "Run a command in the user's default shell and return what it printed. Each call starts a fresh shell.",
    object(
      {
        cmd: text('The command to run.'),
        cwd: text('Directory to run in; the working directory when left out.'),
        timeout: integer('Give up after this many seconds (30 when left out).'),
        ...callDescription,
      },
      ['cmd'],
    ),
    false,
  ),
  tool(
    'run_background_job',
    'Start a long-running command (a server, a watcher) in the background and return its job id at once.',
    object(
      {
        cmd: text('The command to run.'),
        cwd: text('Directory to run in; the working directory when left out.'),
        ...callDescription,
      },
      ['cmd'],
    ),
    false,
  ),
  tool(
    'list_background_jobs',
    'List the background jobs with their status and running time.',
    object({ ...callDescription }),
    true,
  ),
  tool(
    'view_background_job',
    'Show the output and status of a background job.',
    object({ job_id: text('Id of the job.'), ...callDescription }, ['job_id']),
    true,
  ),
  tool(
    'stop_background_job',
    'Stop a background job and every process it started.',
    object({ job_id: text('Id of the job.'), ...callDescription }, ['job_id']),
    false,
  ),
  tool(
    'think',
    'Write down a thought as a scratchpad step before acting; the reply lists every thought so far.',
    object({ thought: text('The thought.') }, ['thought']),
    false,
  ),
  tool(
    'create_todo',
    'Add one item to the to-do list.',
    object({ description: text('What needs doing.') }, ['description']),
    false,
  ),
  tool(
    'create_todos',
    'Add several items to the to-do list.',
    object({ descriptions: list(text(), 'What needs doing, one entry per item.') }, ['descriptions']),
    false,
  ),
  tool(
    'update_todos',
    'Change the status of one or more to-do items.',
    object(
      {
        updates: list(
          object(
            {
              id: text('Id of the item.'),
              status: text('pending, in-progress or completed.'),
            },
            ['id', 'status'],
          ),
          'The changes.',
        ),
      },
      ['updates'],
    ),
    false,
  ),
  tool('list_todos', 'Show the to-do list with the status of each item.', object({}), true),
  tool(
    'add_memory',
    'Store a new memory that later sessions can recall.',
    object(
      {
        memory: text('What to remember.'),
        category: text('A category such as preference, fact, project or decision.'),
      },
      ['memory'],
    ),
    false,
  ),
  tool('get_memories', 'Return every stored memory.', object({}), true),
  tool(
    'search_memories',
    'Find stored memories by keywords and category.',
    object({
      query: text('Keywords that must all appear.'),
      category: text('Only memories in this category.'),
    }),
    true,
  ),
  tool(
    'update_memory',
    'Change the text or category of a stored memory.',
    object(
      {
        id: text('Id of the memory.'),
        memory: text('The new text.'),
        category: text('The new category.'),
      },
      ['id', 'memory'],
    ),
    false,
  ),
  tool('delete_memory', 'Delete a stored memory.', object({ id: text('Id of the memory.') }, ['id']), false),
  tool(
    'fetch',
    'Fetch one or more http or https addresses and return their bodies, as text, markdown or HTML.',
    object(
      {
        urls: list(text(), 'The addresses to fetch.'),
        format: choice(['text', 'markdown', 'html'], 'Form of the returned content.'),
        timeout: integer('Give up after this many seconds.'),
      },
      ['urls', 'format'],
    ),
    true,
  ),
  tool(
    'transfer_task',
    'Give a task to another agent of the team and get its answer back.',
    object(
      {
        agent: text('Name of the agent.'),
        task: text('What the agent should do.'),
        expected_output: text('What the answer should contain.'),
      },
      ['agent', 'task', 'expected_output'],
    ),
    false,
  ),
  tool(
    'handoff',
    'Pass the conversation on to another agent, which carries on from here.',
    object({ agent: text('Name of the agent.') }, ['agent']),
    false,
  ),
  tool(
    'run_background_agent',
    'Start a sub-agent on a task in the background and return its task id at once.',
    object(
      {
        agent: text('Name of the sub-agent.'),
        task: text('What the sub-agent should do.'),
        expected_output: text('What the answer should contain.'),
      },
      ['agent', 'task'],
    ),
    false,
  ),
  tool('list_background_agents', 'List the background sub-agent tasks with their status.', object({}), true),
  tool(
    'view_background_agent',
    'Show the output so far, or the final answer, of a background sub-agent task.',
    object({ task_id: text('Id of the task.') }, ['task_id']),
    true,
  ),
  tool(
    'wait_background_agents',
    'Wait for the given background sub-agent tasks to finish and return their results; they keep running if it times out.',
    object(
      {
        task_ids: list(text(), 'Ids of the tasks.'),
        timeout: integer('Longest wait in seconds for the whole group.'),
      },
      ['task_ids'],
    ),
    true,
  ),
  tool(
    'stop_background_agent',
    'Stop a background sub-agent task.',
    object({ task_id: text('Id of the task.') }, ['task_id']),
    false,
  ),
  tool(
    'read_skill',
    "Load a skill's instructions by name. Commands embedded in the skill are run, after approval, to fill it in.",
    object({ name: text('Name of the skill.') }, ['name']),
    false,
  ),
  tool(
    'read_skill_file',
    'Read a supporting file that belongs to a skill.',
    object(
      {
        skill_name: text('Name of the skill.'),
        path: text('Path of the file inside the skill, such as "references/forms.md".'),
      },
      ['skill_name', 'path'],
    ),
    true,
  ),
  tool(
    'run_skill',
    'Run a skill as a sub-agent with its own context, for skills meant to run that way.',
    object(
      {
        name: text('Name of the skill.'),
        task: text('What the skill should achieve.'),
      },
      ['name', 'task'],
    ),
    false,
  ),
  tool(
    'user_prompt',
    'Ask the user a question in a dialog and wait for the answer, optionally in a given structure.',
    object(
      {
        message: text('The question.'),
        title: text('Title of the dialog.'),
        schema: record(true, 'JSON Schema the answer should follow.'),
      },
      ['message'],
    ),
    false,
  ),
];

export const dockerAgentSystemPrompt = [
  "You are an agent working on the user's files and shell through the tools provided.",
  'Look at the relevant files before changing them, keep changes small, check the result by running commands,',
  'and reply briefly with what you did.',
].join(' ');
