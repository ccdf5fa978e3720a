// Gemini CLI 0.61.0's own tools for the main agent, as its requests offered them: the `functionDeclarations` of the
// first agent turn (seq 2) in test/fixtures/real/gemini-cli-0.61.0/requests.jsonl, which
// test/replay/catalogue/gemini.test.ts checks them against (names, descriptions and `parametersJsonSchema` exactly
// as sent, in their order). The text is Google's (google-gemini/gemini-cli, Copyright 2025 Google LLC, Apache
// License 2.0: licenses/google-gemini-cli.Apache-2.0.txt). A sub-agent is offered the same tools but update_topic
// and invoke_agent, plus `complete_task` (geminiSubagentTools, kept apart: a main session never had it; the sub-agent gets other
// descriptions of read_file, replace, write_file, web_fetch and google_web_search). The
// read-only flags and the system prompt are ours: Gemini CLI's own (about 32 KB) is not in its logs.

import type { ToolSpec } from './types.js';

export const geminiTools: readonly ToolSpec[] = [
  {
    name: 'update_topic',
    description:
      'Manages your narrative flow. Include `title` and `summary` only when starting a new Chapter (logical phase) or shifting strategic intent.',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string', description: 'The title of the new topic or chapter.' },
        summary: {
          type: 'string',
          description:
            '(OPTIONAL) A detailed summary (5-10 sentences) covering both the work completed in the previous topic and the strategic intent of the new topic. This is required when transitioning between topics to maintain continuity.',
        },
        strategic_intent: {
          type: 'string',
          description: 'A mandatory one-sentence statement of your immediate intent.',
        },
        wait_for_previous: {
          type: 'boolean',
          description:
            'Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.',
        },
      },
      required: ['strategic_intent'],
    },
    readOnly: false,
  },
  {
    name: 'list_directory',
    description:
      'Lists the names of files and subdirectories directly within a specified directory path. Can optionally ignore entries matching provided glob patterns.',
    parameters: {
      type: 'object',
      properties: {
        dir_path: { description: 'The path to the directory to list', type: 'string' },
        ignore: { description: 'List of glob patterns to ignore', items: { type: 'string' }, type: 'array' },
        file_filtering_options: {
          description: 'Optional: Whether to respect ignore patterns from .gitignore or .geminiignore',
          type: 'object',
          properties: {
            respect_git_ignore: {
              description:
                'Optional: Whether to respect .gitignore patterns when listing files. Only available in git repositories. Defaults to true.',
              type: 'boolean',
            },
            respect_gemini_ignore: {
              description:
                'Optional: Whether to respect .geminiignore patterns when listing files. Defaults to true.',
              type: 'boolean',
            },
          },
        },
      },
      required: ['dir_path'],
    },
    readOnly: true,
  },
  {
    name: 'read_file',
    description:
      "Reads and returns the content of a specified file. To maintain context efficiency, you MUST use 'start_line' and 'end_line' for targeted, surgical reads of specific sections. For your safety, the tool will automatically truncate output exceeding 2000 lines, 2000 characters per line, or 20MB in size; however, triggering these limits is considered token-inefficient. Always retrieve only the minimum content necessary for your next step. Handles text, images (PNG, JPG, GIF, WEBP, SVG, BMP), audio files (MP3, WAV, AIFF, AAC, OGG, FLAC), and PDF files.",
    parameters: {
      type: 'object',
      properties: {
        file_path: { description: 'The path to the file to read.', type: 'string' },
        start_line: {
          description: 'Optional: The 1-based line number to start reading from.',
          type: 'integer',
          minimum: 1,
        },
        end_line: {
          description: 'Optional: The 1-based line number to end reading at (inclusive).',
          type: 'integer',
          minimum: 1,
        },
      },
      required: ['file_path'],
    },
    readOnly: true,
  },
  {
    name: 'grep_search',
    description: 'Searches for a regular expression pattern within file contents. Max 100 matches.',
    parameters: {
      type: 'object',
      properties: {
        pattern: {
          description:
            "The regular expression (regex) pattern to search for within file contents (e.g., 'function\\s+myFunction', 'import\\s+\\{.*\\}\\s+from\\s+.*').",
          type: 'string',
        },
        dir_path: {
          description:
            'Optional: The absolute path to the directory to search within. If omitted, searches the current working directory.',
          type: 'string',
        },
        include_pattern: {
          description:
            "Optional: A glob pattern to filter which files are searched (e.g., '*.js', '*.{ts,tsx}', 'src/**'). If omitted, searches all files (respecting potential global ignores).",
          type: 'string',
        },
        exclude_pattern: {
          description:
            'Optional: A regular expression pattern to exclude from the search results. If a line matches both the pattern and the exclude_pattern, it will be omitted.',
          type: 'string',
        },
        names_only: {
          description:
            'Optional: If true, only the file paths of the matches will be returned, without the line content or line numbers. This is useful for gathering a list of files.',
          type: 'boolean',
        },
        max_matches_per_file: {
          description:
            'Optional: Maximum number of matches to return per file. Use this to prevent being overwhelmed by repetitive matches in large files.',
          type: 'integer',
          minimum: 1,
        },
        total_max_matches: {
          description:
            'Optional: Maximum number of total matches to return. Use this to limit the overall size of the response. Defaults to 100 if omitted.',
          type: 'integer',
          minimum: 1,
        },
      },
      required: ['pattern'],
    },
    readOnly: true,
  },
  {
    name: 'glob',
    description:
      'Efficiently finds files matching specific glob patterns (e.g., `src/**/*.ts`, `**/*.md`), returning absolute paths sorted by modification time (newest first). Ideal for quickly locating files based on their name or path structure, especially in large codebases.',
    parameters: {
      type: 'object',
      properties: {
        pattern: {
          description: "The glob pattern to match against (e.g., '**/*.py', 'docs/*.md').",
          type: 'string',
        },
        dir_path: {
          description:
            'Optional: The absolute path to the directory to search within. If omitted, searches the root directory.',
          type: 'string',
        },
        case_sensitive: {
          description: 'Optional: Whether the search should be case-sensitive. Defaults to false.',
          type: 'boolean',
        },
        respect_git_ignore: {
          description:
            'Optional: Whether to respect .gitignore patterns when finding files. Only available in git repositories. Defaults to true.',
          type: 'boolean',
        },
        respect_gemini_ignore: {
          description:
            'Optional: Whether to respect .geminiignore patterns when finding files. Defaults to true.',
          type: 'boolean',
        },
      },
      required: ['pattern'],
    },
    readOnly: true,
  },
  {
    name: 'replace',
    description:
      'Replaces text within a file. By default, the tool expects to find and replace exactly ONE occurrence of `old_string`. If you want to replace multiple occurrences of the exact same string, set `allow_multiple` to true. This tool is preferred for surgical edits to existing files as it minimizes token usage, simplifies code reviews, and avoids accidental deletions. This tool requires providing significant context around the change to ensure precise targeting.\nThe user has the ability to modify the `new_string` content. If modified, this will be stated in the response.',
    parameters: {
      type: 'object',
      properties: {
        file_path: { description: 'The path to the file to modify.', type: 'string' },
        instruction: {
          description:
            'A clear, semantic instruction for the code change, acting as a high-quality prompt for an expert LLM assistant. It must be self-contained and explain the goal of the change.',
          type: 'string',
        },
        old_string: {
          description:
            'The exact literal text to replace, unescaped. If this string is not the exact literal text (i.e. you escaped it) or does not match exactly, the tool will fail.',
          type: 'string',
        },
        new_string: {
          description:
            "The exact literal text to replace `old_string` with, unescaped. Provide the EXACT text. Ensure the resulting code is correct and idiomatic. Do not use omission placeholders like '(rest of methods ...)', '...', or 'unchanged code'; provide exact literal code.",
          type: 'string',
        },
        allow_multiple: {
          type: 'boolean',
          description:
            'If true, the tool will replace all occurrences of `old_string`. If false (default), it will only succeed if exactly one occurrence is found.',
        },
      },
      required: ['file_path', 'instruction', 'old_string', 'new_string'],
    },
    readOnly: false,
  },
  {
    name: 'write_file',
    description:
      "Writes the complete content to a file, automatically creating missing parent directories. Overwrites existing files. The user has the ability to modify 'content' before it is saved. Best for new or small files; use 'replace' for targeted edits to large files to minimize token usage and simplify reviews.",
    parameters: {
      type: 'object',
      properties: {
        file_path: { description: 'Path to the file.', type: 'string' },
        content: {
          description:
            "The complete content to write. Provide the full file; do not use placeholders like '// ... rest of code'.",
          type: 'string',
        },
      },
      required: ['file_path', 'content'],
    },
    readOnly: false,
  },
  {
    name: 'web_fetch',
    description:
      "Analyzes and extracts information from up to 20 URLs. Ideal for documentation review, technical research, or reading raw code from GitHub. You can provide specific, complex instructions for the extraction (e.g., 'Summarize the breaking changes'). Provides cited answers based on the content. GitHub 'blob' URLs are automatically converted to raw versions for better processing. Supports HTTP/HTTPS only.",
    parameters: {
      type: 'object',
      properties: {
        prompt: {
          description:
            'A string containing the URL(s) and your specific analysis instructions. Be clear about what information you want to find or summarize. Supports up to 20 URLs.',
          type: 'string',
        },
      },
      required: ['prompt'],
    },
    readOnly: true,
  },
  {
    name: 'run_shell_command',
    description:
      'This tool executes a given shell command as `bash -c <command>`. Command can start background processes using `&`. Command is executed as a subprocess that leads its own process group. Command process group can be terminated as `kill -- -PGID` or signaled as `kill -s SIGNAL -- -PGID`.\n\n      Efficiency Guidelines:\n      - Quiet Flags: Always prefer silent or quiet flags (e.g., `npm install --silent`, `git --no-pager`) to reduce output volume while still capturing necessary information.\n      - Pagination: Always disable terminal pagination to ensure commands terminate (e.g., use `git --no-pager`, `systemctl --no-pager`, or set `PAGER=cat`).\n\n      The following information is returned:\n\n      Output: Combined stdout/stderr. Can be `(empty)` or partial on error and for any unwaited background processes.\n      Exit Code: Only included if non-zero (command failed).\n      Error: Only included if a process-level error occurred (e.g., spawn failure).\n      Signal: Only included if process was terminated by a signal.\n      Background PIDs: Only included if background processes were started.\n      Process Group PGID: Only included if available.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'Exact bash command to execute as `bash -c <command>`' },
        description: {
          type: 'string',
          description:
            'Brief description of the command for the user. Be specific and concise. Ideally a single sentence. Can be up to 3 sentences for clarity. No line breaks.',
        },
        dir_path: {
          type: 'string',
          description:
            '(OPTIONAL) The path of the directory to run the command in. If not provided, the project root directory is used. Must be a directory within the workspace and must already exist.',
        },
        is_background: {
          type: 'boolean',
          description:
            'Set to true if this command should be run in the background (e.g. for long-running servers or watchers). The command will be started, allowed to run for a brief moment to check for immediate errors, and then moved to the background.',
        },
        delay_ms: {
          type: 'integer',
          description:
            'Optional. Delay in milliseconds to wait after starting the process in the background. Useful to allow the process to start and generate initial output before returning.',
        },
      },
      required: ['command'],
    },
    readOnly: false,
  },
  {
    name: 'list_background_processes',
    description:
      'Lists all active and recently completed background shell processes orchestrating by the agent.',
    parameters: {
      type: 'object',
      properties: {
        wait_for_previous: {
          type: 'boolean',
          description:
            'Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.',
        },
      },
    },
    readOnly: true,
  },
  {
    name: 'read_background_output',
    description: 'Reads the output log of a background shell process. Support reading tail snapshot.',
    parameters: {
      type: 'object',
      properties: {
        pid: { type: 'integer', description: 'The process ID (PID) of the background process to inspect.' },
        lines: {
          type: 'integer',
          minimum: 1,
          description: 'Optional. Number of lines to read from the end of the log. Defaults to 100.',
        },
        delay_ms: {
          type: 'integer',
          description:
            'Optional. Delay in milliseconds to wait before reading the output. Useful to allow the process to start and generate initial output.',
        },
        wait_for_previous: {
          type: 'boolean',
          description:
            'Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.',
        },
      },
      required: ['pid'],
    },
    readOnly: true,
  },
  {
    name: 'google_web_search',
    description:
      "Performs a grounded Google Search to find information across the internet. Returns a synthesized answer with citations (e.g., [1]) and source URIs. Best for finding up-to-date documentation, troubleshooting obscure errors, or broad research. Use this when you don't have a specific URL. If a search result requires deeper analysis, follow up by using 'web_fetch' on the provided URI.",
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          description:
            "The search query. Supports natural language questions (e.g., 'Latest breaking changes in React 19') or specific technical queries.",
        },
      },
      required: ['query'],
    },
    readOnly: true,
  },
  {
    name: 'enter_plan_mode',
    description:
      'Switch to Plan Mode to safely research, design, and plan complex changes using read-only tools.',
    parameters: {
      type: 'object',
      properties: {
        reason: { type: 'string', description: 'Short reason explaining why you are entering plan mode.' },
      },
    },
    readOnly: false,
  },
  {
    name: 'invoke_agent',
    description: 'Invoke a subagent to perform a specific task or investigation.',
    parameters: {
      type: 'object',
      properties: {
        agent_name: { type: 'string', description: 'Name of the subagent to invoke' },
        prompt: {
          type: 'string',
          description:
            'The COMPLETE query to send the subagent. MUST be comprehensive and detailed. Include all context, background, questions, and expected output format. Do NOT send brief or incomplete instructions.',
        },
        wait_for_previous: {
          type: 'boolean',
          description:
            'Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.',
        },
      },
      required: ['agent_name', 'prompt'],
    },
    readOnly: false,
  },
  {
    name: 'activate_skill',
    description:
      "Activates a specialized agent skill by name (Available: 'skill-creator', 'antigravity-support'). Returns the skill's instructions wrapped in `<activated_skill>` tags. These provide specialized guidance for the current task. Use this when you identify a task that matches a skill's description. ONLY use names exactly as they appear in the `<available_skills>` section.",
    parameters: {
      type: 'object',
      properties: {
        name: {
          type: 'string',
          enum: ['skill-creator', 'antigravity-support'],
          description: 'The name of the skill to activate.',
        },
      },
      required: ['name'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    },
    readOnly: false,
  },
];

/** The tool a Gemini CLI sub-agent ends with (its result is what the parent's invoke_agent returns). */
export const geminiSubagentTools: readonly ToolSpec[] = [
  {
    name: 'complete_task',
    description:
      'Call this tool to submit your final answer and complete the task. This is the ONLY way to finish.',
    parameters: {
      type: 'object',
      properties: {
        result: {
          type: 'object',
          properties: { response: { type: 'string', description: 'The final response from the agent.' } },
          required: ['response'],
          additionalProperties: false,
        },
        wait_for_previous: {
          type: 'boolean',
          description:
            'Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools.',
        },
      },
      required: ['result'],
    },
    readOnly: false,
  },
];

export const geminiSystemPrompt = [
  "You are a coding agent working in the user's project from their terminal, with tools to read, search, edit",
  'and write files and to run shell commands. Look before you change anything, keep changes small, verify them',
  'by running the relevant commands, and answer briefly with what you did.',
].join(' ');
