// opencode's built-in tools as of 1.18.x (the version this project drives, npm opencode-ai 1.18.33). Parameter names
// and types are opencode's; every description below is ours.
//
// Read:
// - The bundled code of opencode-ai 1.18.33 itself (node_modules/opencode-linux-x64/bin/opencode, the compiled
//   packages/opencode/src/tool/*.ts and tool/registry.ts), read as text: `ToolRegistry.state` builds the built-in
//   list `invalid, question (app/cli/desktop clients or OPENCODE_ENABLE_QUESTION_TOOL), bash, read, glob, grep, edit,
//   write, task, webfetch, todowrite, websearch, skill, apply_patch, execute (OPENCODE_EXPERIMENTAL_CODE_MODE),
//   lsp (OPENCODE_EXPERIMENTAL_LSP_TOOL), plan_exit (OPENCODE_EXPERIMENTAL_PLAN_MODE)`, and each tool's
//   Effect Schema `Struct` gives the parameters. `ToolRegistry.tools` then offers apply_patch instead of edit and
//   write to "gpt-" models, and websearch only with the opencode provider or Exa/Parallel enabled.
// - anomalyco/opencode packages/opencode/src/tool/bash.ts (stored version @00376c26, an older release) for the
//   bash `description` parameter, which 1.18.33 no longer declares but older sessions record (the 1.1.49 session in
//   /work/shared/fixtures/opencode/sandbox-agent-native does).
// - /work/shared/fixtures/opencode/*.json (rivet-dev/sandbox-agent @6a3345b9, opencode 1.1.49) and
//   /work/main/sample-sessions/opencode/opencode.db (opencode 1.18.33) for the recorded tool parts.
//
// Not in 1.18.x, so not here (a session that called them gets an inferred schema): list, patch, multiedit,
// todoread, batch, codesearch. `invalid` is a built-in but opencode never offers it to the model (it is dropped
// from activeTools); it only records a malformed call, so replay must not offer it either (hiddenOpencodeTools).

import { choice, flag, integer, list, number, object, text, tool } from './schema.js';
import type { ToolSpec } from './types.js';

export const hiddenOpencodeTools: readonly string[] = ['invalid'];

const lspOperations = [
  'goToDefinition',
  'findReferences',
  'hover',
  'documentSymbol',
  'workspaceSymbol',
  'goToImplementation',
  'prepareCallHierarchy',
  'incomingCalls',
  'outgoingCalls',
];

export const opencodeTools: readonly ToolSpec[] = [
  tool(
    'question',
    'Ask the user one or more multiple-choice questions and wait for the answers.',
    object(
      {
        questions: list(
          object(
            {
              question: text('The full question.'),
              header: text('A very short label for it (at most 30 characters).'),
              options: list(
                object(
                  {
                    label: text('The choice as the user sees it (one to five words).'),
                    description: text('What picking it means.'),
                  },
                  ['label', 'description'],
                ),
                'The choices.',
              ),
              multiple: flag('Let the user pick more than one choice.'),
            },
            ['question', 'header', 'options'],
          ),
          'The questions to ask.',
        ),
      },
      ['questions'],
    ),
    false,
  ),
  tool(
    'bash',
    'Run a shell command in the project and return what it printed. Each call starts a fresh shell; use workdir, not cd.',
    object(
      {
        command: text('The command to run.'),
        timeout: integer('Give up after this many milliseconds.'),
        workdir: text('Directory to run the command in; the project directory when left out.'),
        description: text(
          'Five to ten words saying what the command does (declared by releases before 1.18).',
        ),
      },
      ['command'],
    ),
    false,
  ),
  tool(
    'read',
    'Read a file with line numbers, or list a directory. Images and PDFs come back as attachments.',
    object(
      {
        filePath: text('Absolute path of the file or directory.'),
        offset: integer('First line to read, counting from 1.'),
        limit: integer('How many lines to read (2000 when left out).'),
      },
      ['filePath'],
    ),
    true,
  ),
  tool(
    'glob',
    'Find files whose paths match a glob pattern, newest first.',
    object(
      {
        pattern: text('Glob pattern such as "**/*.ts".'),
        path: text('Directory to search in; leave it out for the project directory.'),
      },
      ['pattern'],
    ),
    true,
  ),
  tool(
    'grep',
    'Search file contents with a regular expression and list the matching lines by file.',
    object(
      {
        pattern: text('Regular expression to look for.'),
        path: text('Directory to search in; the project directory when left out.'),
        include: text('Only search files matching this glob, such as "*.{ts,tsx}".'),
      },
      ['pattern'],
    ),
    true,
  ),
  tool(
    'edit',
    'Replace an exact piece of text in a file with new text. The old text must occur once unless replaceAll is set.',
    object(
      {
        filePath: text('Absolute path of the file.'),
        oldString: text('The exact text to replace.'),
        newString: text('The text to put in its place (must differ from oldString).'),
        replaceAll: flag('Replace every occurrence instead of exactly one.'),
      },
      ['filePath', 'oldString', 'newString'],
    ),
    false,
  ),
  tool(
    'write',
    'Create a file, or replace the whole content of an existing one.',
    object(
      {
        content: text('The complete new content.'),
        filePath: text('Absolute path of the file.'),
      },
      ['content', 'filePath'],
    ),
    false,
  ),
  tool(
    'task',
    'Hand a task to a sub-agent that works in its own session and reports back when done.',
    object(
      {
        description: text('Three to five words naming the task.'),
        prompt: text('Everything the sub-agent needs to do the task, and what it should report back.'),
        subagent_type: text('Which sub-agent to use (one of the agent types listed for this session).'),
        task_id: text('Id of an earlier task to continue in the same sub-agent session.'),
        command: text('The command that started this task, if any.'),
        background: flag('Run the sub-agent in the background and be told when it finishes (experimental).'),
      },
      ['description', 'prompt', 'subagent_type'],
    ),
    false,
  ),
  tool(
    'webfetch',
    'Fetch a web page and return its content as markdown, plain text or HTML.',
    object(
      {
        url: text('The http or https address to fetch.'),
        format: choice(['text', 'markdown', 'html'], 'Form of the returned content; markdown when left out.'),
        timeout: number('Give up after this many seconds (at most 120).'),
      },
      ['url'],
    ),
    true,
  ),
  tool(
    'todowrite',
    'Replace the session to-do list, used to plan and track the steps of the current work.',
    object(
      {
        todos: list(
          object(
            {
              content: text('What needs doing.'),
              status: text('One of pending, in_progress, completed, cancelled.'),
              priority: text('One of high, medium, low.'),
              id: text('Id of the item (declared by older releases).'),
            },
            ['content', 'status', 'priority'],
          ),
          'The whole updated list.',
        ),
      },
      ['todos'],
    ),
    false,
  ),
  tool(
    'websearch',
    'Search the web and return the most relevant pages with extracts.',
    object(
      {
        query: text('The search terms.'),
        numResults: number('How many results to return (8 when left out).'),
        livecrawl: choice(
          ['fallback', 'preferred'],
          'When to crawl pages live instead of using cached copies.',
        ),
        type: choice(['auto', 'fast', 'deep'], 'How thorough the search should be.'),
        contextMaxCharacters: number('Longest extract to return, in characters.'),
      },
      ['query'],
    ),
    true,
  ),
  tool(
    'skill',
    'Load a skill (packaged instructions and files) into the conversation and follow it.',
    object({ name: text('Name of the skill, as listed in the system prompt.') }, ['name']),
    false,
  ),
  tool(
    'apply_patch',
    'Add, change, move or delete files with one patch in the "*** Begin Patch" format.',
    object({ patchText: text('The whole patch, from "*** Begin Patch" to "*** End Patch".') }, ['patchText']),
    false,
  ),
  tool(
    'execute',
    'Run a short script that can call the connected MCP tools (code mode, experimental).',
    object({ code: text('The script to run.') }, ['code']),
    false,
  ),
  tool(
    'lsp',
    'Ask the language server about code: definitions, references, hover text, symbols, implementations and calls.',
    object(
      {
        operation: choice(lspOperations, 'The question to ask.'),
        filePath: text('Path of the file, absolute or relative to the project.'),
        line: integer('Line, counting from 1.'),
        character: integer('Column, counting from 1.'),
        query: text('What to look for with workspaceSymbol; empty for every symbol.'),
      },
      ['operation', 'filePath', 'line', 'character'],
    ),
    true,
  ),
  tool(
    'plan_exit',
    'Say the plan is finished and ask the user to switch to the build agent to carry it out.',
    object({}),
    false,
  ),
];

export const opencodeSystemPrompt = [
  "You are a coding agent working in the user's project from a terminal.",
  'Use the tools to explore the code, run commands and edit files; read a file before you change it.',
  'Prefer small, focused changes, verify them by running the tests, and answer concisely.',
].join(' ');
