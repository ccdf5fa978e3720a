// Codex CLI 0.169.0's own tools for a bundled model (gpt-5.5), as its requests offered them: the `tools` of the first
// request in test/fixtures/real/codex-0.169.0/requests-main.jsonl, which test/replay/catalogue/codex-0169.test.ts
// checks them against. The names, descriptions and parameters are OpenAI's (openai/codex, Copyright 2025 OpenAI,
// Apache License 2.0: licenses/openai-codex.Apache-2.0.txt). Three are not functions on the wire, and keep their
// wire form (`wire`) for the Responses requests pairs hold. In the chat form pairs take, two are not functions:
// `apply_patch` is a freeform (custom) tool with a Lark grammar, offered here in its function form {input} with
// Codex's description; `web_search` is hosted, offered as the replay-history catalogue's (the action a call logs).
// `tool_search` is Codex's client-run search of deferred tools (the multi_agent_v1 namespace), a function here.

import { codexTools } from './codex.js';
import type { ToolSpec } from './types.js';

const webSearch = codexTools.find((tool) => tool.name === 'web_search') as ToolSpec;

/** apply_patch's Lark grammar, as the requests carried it. */
const patchGrammar =
  'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?\n\nhunk: add_hunk | delete_hunk | update_hunk\nadd_hunk: "*** Add File: " filename LF add_line+\ndelete_hunk: "*** Delete File: " filename LF\nupdate_hunk: "*** Update File: " filename LF change_move? change?\n\nfilename: /(.+)/\nadd_line: "+" /(.*)/ LF -> line\n\nchange_move: "*** Move to: " filename LF\nchange: (change_context | change_line)+ eof_line?\nchange_context: ("@@" | "@@ " /(.+)/) LF\nchange_line: ("+" | "-" | " ") /(.*)/ LF\neof_line: "*** End of File" LF\n\n%import common.LF\n';

export const codex0169Tools: ToolSpec[] = [
  {
    name: 'exec_command',
    description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
    parameters: {
      type: 'object',
      properties: {
        cmd: { type: 'string', description: 'Shell command to execute.' },
        justification: {
          type: 'string',
          description: 'User-facing approval question for `require_escalated`; omit otherwise.',
        },
        login: {
          type: 'boolean',
          description: 'True runs the shell with -l/-i semantics; false disables them. Defaults to true.',
        },
        max_output_tokens: {
          type: 'number',
          description:
            'Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy.',
        },
        prefix_rule: {
          type: 'array',
          description:
            'Reusable approval prefix for `cmd`, only with `sandbox_permissions: "require_escalated"`; for example ["git", "pull"].',
          items: { type: 'string' },
        },
        sandbox_permissions: {
          type: 'string',
          description:
            'Per-command sandbox override. Defaults to `use_default`; use `require_escalated` for unsandboxed execution.',
          enum: ['use_default', 'require_escalated'],
        },
        shell: {
          type: 'string',
          description: "Shell binary to launch. Defaults to the user's default shell.",
        },
        tty: {
          type: 'boolean',
          description: 'True allocates a PTY for the command; false or omitted uses plain pipes.',
        },
        workdir: {
          type: 'string',
          description: 'Working directory for the command. Defaults to the turn cwd.',
        },
        yield_time_ms: {
          type: 'number',
          description: 'Wait before yielding output. Defaults to 10000 ms; effective range is 250-30000 ms.',
        },
      },
      required: ['cmd'],
      additionalProperties: false,
    },
    readOnly: false,
  },
  {
    name: 'write_stdin',
    description: 'Writes characters to an existing unified exec session and returns recent output.',
    parameters: {
      type: 'object',
      properties: {
        chars: {
          type: 'string',
          description: 'Bytes to write to stdin. Defaults to empty, which polls without writing.',
        },
        max_output_tokens: {
          type: 'number',
          description:
            'Output token budget. Defaults to 10000 tokens; larger requests may be capped by policy.',
        },
        session_id: { type: 'number', description: 'Identifier of the running unified exec session.' },
        yield_time_ms: {
          type: 'number',
          description:
            'Wait before yielding output. Non-empty writes default to 250 ms and cap at 30000 ms; empty polls wait 5000-300000 ms by default.',
        },
      },
      required: ['session_id'],
      additionalProperties: false,
    },
    readOnly: false,
  },
  {
    name: 'update_plan',
    description:
      'Updates the task plan.\nProvide an optional explanation and a list of plan items, each with a step and status.\nAt most one step can be in_progress at a time.\n',
    parameters: {
      type: 'object',
      properties: {
        explanation: { type: 'string', description: 'Optional explanation for this plan update.' },
        plan: {
          type: 'array',
          description: 'The list of steps',
          items: {
            type: 'object',
            properties: {
              status: {
                type: 'string',
                description: 'Step status.',
                enum: ['pending', 'in_progress', 'completed'],
              },
              step: { type: 'string', description: 'Task step text.' },
            },
            required: ['step', 'status'],
            additionalProperties: false,
          },
        },
      },
      required: ['plan'],
      additionalProperties: false,
    },
    readOnly: false,
  },
  {
    name: 'request_user_input',
    description:
      'Request user input for one to three short questions and wait for the response. This tool is only available in Plan mode.',
    parameters: {
      type: 'object',
      properties: {
        questions: {
          type: 'array',
          description: 'Questions to show the user. Prefer 1 and do not exceed 3',
          items: {
            type: 'object',
            properties: {
              header: {
                type: 'string',
                description: 'Short header label shown in the UI (12 or fewer chars).',
              },
              id: { type: 'string', description: 'Stable identifier for mapping answers (snake_case).' },
              options: {
                type: 'array',
                description:
                  'Provide 2-3 mutually exclusive choices. Put the recommended option first and suffix its label with "(Recommended)". Do not include an "Other" option in this list; the client will add a free-form "Other" option automatically.',
                items: {
                  type: 'object',
                  properties: {
                    description: {
                      type: 'string',
                      description: 'One short sentence explaining impact/tradeoff if selected.',
                    },
                    label: { type: 'string', description: 'User-facing label (1-5 words).' },
                  },
                  required: ['label', 'description'],
                  additionalProperties: false,
                },
              },
              question: { type: 'string', description: 'Single-sentence prompt shown to the user.' },
            },
            required: ['id', 'header', 'question', 'options'],
            additionalProperties: false,
          },
        },
      },
      required: ['questions'],
      additionalProperties: false,
    },
    readOnly: false,
  },
  {
    name: 'apply_patch',
    description:
      'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
    parameters: {
      type: 'object',
      properties: {
        input: {
          type: 'string',
          description: 'The whole patch, in the grammar the freeform tool takes (lark).',
        },
      },
      required: ['input'],
      additionalProperties: false,
    },
    readOnly: false,
    wire: {
      type: 'custom',
      name: 'apply_patch',
      description:
        'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
      format: { type: 'grammar', syntax: 'lark', definition: patchGrammar },
    },
  },
  {
    name: 'view_image',
    description:
      'View a local image file from the filesystem when visual inspection is needed. Use this for images already available on disk.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Local filesystem path to an image file.' } },
      required: ['path'],
      additionalProperties: false,
    },
    readOnly: true,
  },
  {
    name: 'get_goal',
    description:
      'Get the current goal for this thread, including status, budgets, token and elapsed-time usage, and remaining token budget.',
    parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
    readOnly: true,
  },
  {
    name: 'create_goal',
    description:
      'Create a goal only when explicitly requested by the user or system/developer instructions; do not infer goals from ordinary tasks.\nSet token_budget only when an explicit token budget is requested. Fails if an unfinished goal exists; use update_goal only for status.',
    parameters: {
      type: 'object',
      properties: {
        objective: {
          type: 'string',
          description:
            'Required. The concrete objective to start pursuing. This starts a new active goal when no goal exists or replaces the current goal when it is complete.',
        },
        token_budget: {
          type: 'integer',
          description: 'Positive token budget for the new goal. Omit unless explicitly requested.',
        },
      },
      required: ['objective'],
      additionalProperties: false,
    },
    readOnly: false,
  },
  {
    name: 'update_goal',
    description:
      "Update the existing goal.\nSet status to `paused` only at the user's explicit request to pause this goal, never on your own initiative. Ask if unclear; a later resume revokes that request. Report the returned status and stop goal work. Budget limits take precedence over pausing.\nSet status to `complete` only when the objective has actually been achieved and no required work remains.\nSet status to `blocked` only when the same blocking condition has repeated for at least three consecutive goal turns, counting the original/user-triggered turn and any automatic continuations, and the agent cannot make meaningful progress without user input or an external-state change.\nIf the user resumes a goal that was previously marked `blocked`, treat the resumed run as a fresh blocked audit. If the same blocking condition then repeats for at least three consecutive resumed goal turns, set status to `blocked` again.\nOnce the blocked threshold is satisfied, do not keep reporting that you are still blocked while leaving the goal active; set status to `blocked`.\nDo not use `blocked` merely because the work is hard, slow, uncertain, incomplete, or would benefit from clarification.\nDo not mark a goal complete merely because its budget is nearly exhausted or because you are stopping work.\nYou cannot use this tool to resume, budget-limit, or usage-limit a goal; those status changes are controlled by the user or system.\nWhen marking a budgeted goal achieved with status `complete`, report the final token usage from the tool result to the user.",
    parameters: {
      type: 'object',
      properties: {
        status: {
          type: 'string',
          description:
            'Required. `paused` requires an explicit user request. Set to `complete` only when the objective is achieved and no required work remains. Set to `blocked` only after the same blocking condition has recurred for at least three consecutive goal turns and the agent is at an impasse. After a previously blocked goal is resumed, the resumed run starts a fresh blocked audit.',
          enum: ['complete', 'blocked', 'paused'],
        },
      },
      required: ['status'],
      additionalProperties: false,
    },
    readOnly: false,
  },
  {
    name: 'tool_search',
    description:
      '# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\nSome of the tools may not have been provided to you upfront, and you should use this tool (`tool_search`) to search for the required tools. For MCP tool discovery, always use `tool_search` instead of `list_mcp_resources` or `list_mcp_resource_templates`.',
    parameters: {
      type: 'object',
      properties: {
        limit: { type: 'number', description: 'Maximum number of tools to return. Defaults to 8.' },
        query: { type: 'string', description: 'Search query for deferred tools.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    readOnly: true,
  },
  {
    ...webSearch,
    wire: { type: 'web_search', external_web_access: false, search_content_types: ['text', 'image'] },
  },
];

// tool_search goes on the wire as Codex's own kind of tool, not as a function.
const search = codex0169Tools.find((tool) => tool.name === 'tool_search') as ToolSpec;
search.wire = {
  type: 'tool_search',
  execution: 'client',
  description: search.description,
  parameters: search.parameters,
};
