// Codex CLI's built-in tools. Parameter names and types are Codex's; every description below is ours.
//
// Read (the code index holds openai/codex mixed with forks' histories, so only what several stored versions agree
// on, or what the real rollouts show, is used):
// - openai/codex codex-rs/core/src/tools/spec.rs @b8a1c8f8: create_shell_tool, create_shell_command_tool,
//   create_exec_command_tool, create_write_stdin_tool, create_approval_parameters (sandbox_permissions,
//   justification, prefix_rule), create_view_image_tool, create_request_user_input_tool, create_grep_files_tool,
//   create_read_file_tool, create_list_dir_tool, the three MCP resource tools, ApplyPatchToolArgs {input}, and
//   build_specs (which tools a config turns on; `container.exec` and `local_shell` registered as shell aliases).
// - The PLAN_TOOL definition (codex-rs/core/src/tools/handlers/plan.rs), the same in several stored versions:
//   update_plan {explanation?, plan[{step, status}]}, status one of pending, in_progress, completed.
// - The multi-agent tool specs (create_spawn_agent_tool_v1, create_send_input_tool_v1, wait_agent_tool_parameters_v1,
//   create_close_agent_tool_v1, create_resume_agent_tool) in several stored versions: spawn_agent {message, items,
//   agent_type, fork_context, model, reasoning_effort}, wait_agent {targets, timeout_ms}. Earlier releases named
//   these `wait {ids}` and took `id` in send_input/close_agent; those sessions get inferred schemas.
// - /work/shared/fixtures/codex/*: real rollouts of Codex Desktop 0.104.0-alpha.1 (madshn/localpush @f0a54fdf:
//   exec_command, write_stdin, apply_patch as a custom tool, update_plan, web_search_call, list_mcp_resources,
//   list_mcp_resource_templates, mcp__* tools) and a TRAE CLI rollout (kenn-io/agentsview @df0b77cb: spawn_agent,
//   wait_agent {targets, timeout_ms}, exec_command {cmd}).
// - Older releases' shell and shell_command took `with_escalated_permissions` (a boolean) where current ones take
//   sandbox_permissions: shown by stored spec.rs versions, openai/codex tests and sessions people published.
//
// Hosted tools have no function schema upstream; the source adapter records them under fixed names with the
// action the API logged as input, so their schemas here describe that action: web_search (web_search_call's
// action) and local_shell (local_shell_call's action). apply_patch is offered in its function form {input}; the
// freeform (custom tool) form records the raw patch text as the whole input. Left out: container.exec (a dot is not
// allowed in a function name), js_repl/js_repl_poll/js_repl_reset, get_memory and test_sync_tool (feature- or
// test-only).

import { choice, flag, list, number, object, record, text, tool } from './schema.js';
import type { JsonSchema, ToolSpec } from './types.js';

const approval: Record<string, JsonSchema> = {
  sandbox_permissions: text(
    '"require_escalated" to ask to run outside the sandbox; "use_default" otherwise.',
  ),
  justification: text('With require_escalated: one sentence asking the user to approve the command.'),
  prefix_rule: list(
    text(),
    'With require_escalated: a command prefix the user may approve for later calls too.',
  ),
};

const collabItems = list(
  object({
    type: text('text, image, local_image, skill or mention.'),
    text: text(),
    image_url: text(),
    path: text(),
    name: text(),
  }),
  'Structured input, instead of message.',
);

export const codexTools: readonly ToolSpec[] = [
  tool(
    'shell',
    'Run a command, given as a list of arguments (usually ["bash", "-lc", "<script>"]), and return its output.',
    object(
      {
        command: list(text(), 'The program and its arguments.'),
        workdir: text('Directory to run in; set it rather than using cd.'),
        timeout_ms: number('Give up after this many milliseconds.'),
        ...approval,
        with_escalated_permissions: flag('Ask to run outside the sandbox (older releases).'),
      },
      ['command'],
    ),
    false,
  ),
  tool(
    'shell_command',
    "Run a shell script in the user's default shell and return its output.",
    object(
      {
        command: text('The script to run.'),
        workdir: text('Directory to run in; set it rather than using cd.'),
        login: flag('Run as a login shell (the default).'),
        timeout_ms: number('Give up after this many milliseconds.'),
        ...approval,
        with_escalated_permissions: flag('Ask to run outside the sandbox (older releases).'),
      },
      ['command'],
    ),
    false,
  ),
  tool(
    'exec_command',
    'Start a command in a terminal session and return its output, or a session id while it keeps running.',
    object(
      {
        cmd: text('The shell command to run.'),
        workdir: text('Directory to run in; the turn directory when left out.'),
        shell: text('Shell binary to use.'),
        login: flag('Run the shell as a login shell (the default).'),
        tty: flag('Give the command a terminal.'),
        yield_time_ms: number('How long to wait for output before returning.'),
        max_output_tokens: number('Cut the output after about this many tokens.'),
        ...approval,
      },
      ['cmd'],
    ),
    false,
  ),
  tool(
    'write_stdin',
    'Type characters into a running terminal session and return its latest output; empty input just polls.',
    object(
      {
        session_id: number('Id of the session exec_command returned.'),
        chars: text('Characters to write; may be empty.'),
        yield_time_ms: number('How long to wait for output before returning.'),
        max_output_tokens: number('Cut the output after about this many tokens.'),
      },
      ['session_id'],
    ),
    false,
  ),
  tool(
    'local_shell',
    "Run a command through the model provider's built-in local shell tool (its recorded action).",
    object(
      {
        type: choice(['exec']),
        command: list(text(), 'The program and its arguments.'),
        timeout_ms: number('Give up after this many milliseconds.'),
        working_directory: text('Directory to run in.'),
        env: record(text(), 'Environment variables to set.'),
        user: text('User to run as.'),
      },
      ['command'],
    ),
    false,
  ),
  tool(
    'list_mcp_resources',
    'List the resources the configured MCP servers offer.',
    object({
      server: text('Only list the resources of this server.'),
      cursor: text('Cursor from an earlier call, for the next page.'),
    }),
    true,
  ),
  tool(
    'list_mcp_resource_templates',
    'List the parameterised resource templates the configured MCP servers offer.',
    object({
      server: text('Only list the templates of this server.'),
      cursor: text('Cursor from an earlier call, for the next page.'),
    }),
    true,
  ),
  tool(
    'read_mcp_resource',
    'Read one resource from an MCP server.',
    object(
      {
        server: text('Name of the server, as list_mcp_resources gives it.'),
        uri: text('URI of the resource.'),
      },
      ['server', 'uri'],
    ),
    true,
  ),
  tool(
    'update_plan',
    'Replace the task plan: the steps and the status of each, with at most one step in progress.',
    object(
      {
        explanation: text('Why the plan changed.'),
        plan: list(
          object(
            {
              step: text('A short description of the step.'),
              status: choice(['pending', 'in_progress', 'completed']),
            },
            ['step', 'status'],
          ),
          'The whole plan, in order.',
        ),
      },
      ['plan'],
    ),
    false,
  ),
  tool(
    'request_user_input',
    'Ask the user one to three multiple-choice questions and wait for the answers.',
    object(
      {
        questions: list(
          object(
            {
              id: text('Stable snake_case id the answer is filed under.'),
              header: text('Short label for the question (at most 12 characters).'),
              question: text('The question, in one sentence.'),
              options: list(
                object(
                  {
                    label: text('The choice as the user sees it.'),
                    description: text('What picking it means, in one sentence.'),
                  },
                  ['label', 'description'],
                ),
                'Two or three choices, the recommended one first.',
              ),
            },
            ['id', 'header', 'question', 'options'],
          ),
          'The questions to ask.',
        ),
      },
      ['questions'],
    ),
    false,
  ),
  tool(
    'apply_patch',
    'Add, change, move or delete files with one patch in the "*** Begin Patch" format.',
    object({ input: text('The whole patch, from "*** Begin Patch" to "*** End Patch".') }, ['input']),
    false,
  ),
  tool(
    'grep_files',
    'List the files whose contents match a regular expression, most recently changed first.',
    object(
      {
        pattern: text('Regular expression to look for.'),
        include: text('Only search files matching this glob, such as "*.rs".'),
        path: text('File or directory to search; the working directory when left out.'),
        limit: number('Return at most this many paths (100 when left out).'),
      },
      ['pattern'],
    ),
    true,
  ),
  tool(
    'read_file',
    'Read a file with line numbers, either a range of lines or the code block around a line.',
    object(
      {
        file_path: text('Absolute path of the file.'),
        offset: number('First line to read, counting from 1.'),
        limit: number('How many lines to read.'),
        mode: choice(['slice', 'indentation'], 'A plain range of lines, or the block around anchor_line.'),
        indentation: object({
          anchor_line: number('Line the block is found around.'),
          max_levels: number('How many enclosing levels to include.'),
          include_siblings: flag('Also include neighbouring blocks at the same level.'),
          include_header: flag('Include comments or attributes just above the block.'),
          max_lines: number('Return at most this many lines.'),
        }),
      },
      ['file_path'],
    ),
    true,
  ),
  tool(
    'list_dir',
    'List the entries of a directory, with their kind, down to a given depth.',
    object(
      {
        dir_path: text('Absolute path of the directory.'),
        offset: number('First entry to list, counting from 1.'),
        limit: number('How many entries to list.'),
        depth: number('How many levels to descend.'),
      },
      ['dir_path'],
    ),
    true,
  ),
  tool(
    'web_search',
    "Search the web, open a result or find text in it, through the provider's built-in search (its recorded action).",
    object({
      type: choice(['search', 'open_page', 'find_in_page'], 'What to do.'),
      query: text('The search terms.'),
      queries: list(text(), 'Several searches at once.'),
      url: text('The page to open or search in.'),
      pattern: text('The text to find in the page.'),
    }),
    true,
  ),
  tool(
    'view_image',
    'Show the model a local image file.',
    object({ path: text('Path of the image file.') }, ['path']),
    true,
  ),
  tool(
    'spawn_agent',
    'Start a sub-agent on a well-scoped task and return its id.',
    object({
      message: text('The task: its scope, its limits and what to report back.'),
      items: collabItems,
      agent_type: text('Kind of agent to start.'),
      fork_context: flag('Give the sub-agent a copy of this conversation first.'),
      model: text('Run the sub-agent on this model instead of the current one.'),
      reasoning_effort: text('Reasoning effort for the sub-agent.'),
    }),
    false,
  ),
  tool(
    'send_input',
    'Send a message to a running sub-agent, queued or interrupting its current work.',
    object(
      {
        target: text('Id of the sub-agent.'),
        message: text('The message.'),
        items: collabItems,
        interrupt: flag('Stop what the sub-agent is doing and handle this at once.'),
      },
      ['target'],
    ),
    false,
  ),
  tool(
    'wait_agent',
    'Wait until one of the given sub-agents finishes, or the time runs out, and return their statuses.',
    object(
      {
        targets: list(text(), 'Ids of the sub-agents to wait for.'),
        timeout_ms: number('Longest wait in milliseconds.'),
      },
      ['targets'],
    ),
    false,
  ),
  tool(
    'close_agent',
    'Shut down a sub-agent that is no longer needed and return its last status.',
    object({ target: text('Id of the sub-agent.') }, ['target']),
    false,
  ),
  tool(
    'resume_agent',
    'Bring back a sub-agent that was closed, so it can receive messages again.',
    object({ id: text('Id of the sub-agent.') }, ['id']),
    false,
  ),
];

export const codexSystemPrompt = [
  "You are a coding agent running in the user's terminal, working in their repository.",
  'Use the tools to inspect files, run commands and apply patches; keep a short plan for multi-step work.',
  'Make focused changes, check them with the relevant tests, and end with a brief summary of what changed.',
].join(' ');
