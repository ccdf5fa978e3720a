import { describe, expect, it } from 'vitest';
import { type AgentId, agents } from '../../../src/model/session.js';
import { catalogue, isReadOnly } from '../../../src/replay/catalogue/index.js';
import { schemaProblems } from './schema-check.js';

// Catalogues that are the agent's own tools exactly as its requests sent them (Gemini CLI's, Qwen Code's), however
// long their text: a test of their own checks each against the requests.
const ownText = new Set<AgentId>(['gemini', 'qwen']);

describe.each(agents)('the %s catalogue', (agent) => {
  const { tools, systemPrompt } = catalogue(agent);

  it('is for this agent and has a default system prompt', () => {
    expect(catalogue(agent).agent).toBe(agent);
    expect(tools.length).toBeGreaterThan(0);
    expect(systemPrompt.length).toBeGreaterThan(50);
    expect(systemPrompt.length).toBeLessThan(600);
  });

  it('names every tool once, with a name any provider accepts', () => {
    const names = tools.map((spec) => spec.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it.runIf(!ownText.has(agent))('gives every tool a one-or-two sentence description', () => {
    for (const spec of tools) {
      expect(spec.description, spec.name).not.toBe('');
      expect(spec.description.length, spec.name).toBeLessThan(200);
      expect(spec.description.split(/(?<=[.!?])\s+/).length, spec.name).toBeLessThanOrEqual(2);
    }
  });

  it('gives every tool a well-formed object schema (required ⊆ properties, all the way down)', () => {
    for (const spec of tools) {
      expect(spec.parameters.type, spec.name).toBe('object');
      expect(spec.parameters.properties, spec.name).toBeDefined();
      // An agent's own schema may leave an object open (Qwen's `tool_call.arguments`): that is what it sent.
      const problems = schemaProblems(spec.parameters, spec.name).filter(
        (problem) =>
          !(ownText.has(agent) && problem.endsWith('object without properties or additionalProperties')),
      );
      expect(problems).toEqual([]);
      expect(spec.inferred, spec.name).toBeUndefined();
    }
  });

  it('is frozen, since every caller shares it', () => {
    const [first] = tools;
    expect(Object.isFrozen(tools)).toBe(true);
    expect(first && Object.isFrozen(first.parameters)).toBe(true);
  });

  it('answers isReadOnly from the flag of each of its tools', () => {
    for (const spec of tools) expect(isReadOnly(agent, spec.name), spec.name).toBe(spec.readOnly);
  });
});

// Representative tools per agent, including the tricky ones: tools that only look harmless (todo writes, plans,
// skills, sub-agents, questions, hand-offs, the think scratchpad) are not read-only; reading a background job's
// output is.
const readOnlyTable: Record<AgentId, Record<string, boolean>> = {
  'claude-code': {
    Read: true,
    Glob: true,
    Grep: true,
    LS: true,
    WebFetch: true,
    WebSearch: true,
    BashOutput: true,
    TaskOutput: true,
    NotebookRead: true,
    ListMcpResourcesTool: true,
    Bash: false,
    Write: false,
    Edit: false,
    MultiEdit: false,
    NotebookEdit: false,
    Task: false,
    Agent: false,
    TodoWrite: false,
    ExitPlanMode: false,
    EnterPlanMode: false,
    Skill: false,
    SlashCommand: false,
    AskUserQuestion: false,
    KillShell: false,
    TaskStop: false,
  },
  opencode: {
    read: true,
    glob: true,
    grep: true,
    webfetch: true,
    websearch: true,
    lsp: true,
    bash: false,
    edit: false,
    write: false,
    apply_patch: false,
    task: false,
    todowrite: false,
    skill: false,
    question: false,
    plan_exit: false,
    execute: false,
  },
  codex: {
    read_file: true,
    list_dir: true,
    grep_files: true,
    view_image: true,
    web_search: true,
    list_mcp_resources: true,
    read_mcp_resource: true,
    shell: false,
    shell_command: false,
    exec_command: false,
    write_stdin: false,
    local_shell: false,
    apply_patch: false,
    update_plan: false,
    request_user_input: false,
    spawn_agent: false,
    send_input: false,
    wait_agent: false,
    close_agent: false,
  },
  'docker-agent': {
    read_file: true,
    read_multiple_files: true,
    list_directory: true,
    directory_tree: true,
    search_files_content: true,
    fetch: true,
    view_background_job: true,
    list_background_jobs: true,
    list_todos: true,
    search_memories: true,
    shell: false,
    write_file: false,
    edit_file: false,
    run_background_job: false,
    stop_background_job: false,
    think: false,
    create_todo: false,
    update_todos: false,
    add_memory: false,
    transfer_task: false,
    handoff: false,
    read_skill: false,
    run_skill: false,
    run_background_agent: false,
    user_prompt: false,
  },
  gemini: {
    read_file: true,
    list_directory: true,
    glob: true,
    grep_search: true,
    web_fetch: true,
    google_web_search: true,
    list_background_processes: true,
    read_background_output: true,
    run_shell_command: false,
    write_file: false,
    replace: false,
    update_topic: false,
    enter_plan_mode: false,
    invoke_agent: false,
    activate_skill: false,
  },
  qwen: {
    read_file: true,
    glob: true,
    grep_search: true,
    tool_search: true,
    list_agents: true,
    get_goal: true,
    run_shell_command: false,
    write_file: false,
    edit: false,
    notebook_edit: false,
    agent: false,
    skill: false,
    tool_call: false,
    update_goal: false,
  },
};

describe('read-only flags', () => {
  for (const agent of agents) {
    it.each(Object.entries(readOnlyTable[agent]))(`${agent} %s → %s`, (name, expected) => {
      expect(catalogue(agent).tools.some((spec) => spec.name === name)).toBe(true);
      expect(isReadOnly(agent, name)).toBe(expected);
    });
  }

  it.each([
    ['claude-code', 'mcp__fs__read_file'],
    ['claude-code', 'mcp__filesystem__list_directory'],
    ['claude-code', 'read'],
    ['claude-code', 'ReadFile'],
    ['opencode', 'Read'],
    ['opencode', 'filesystem_read_file'],
    ['opencode', 'list'],
    ['opencode', 'invalid'],
    ['codex', 'mcp__fs__read_file'],
    ['codex', 'container.exec'],
    ['docker-agent', 'mcp__fs__read_file'],
    ['docker-agent', 'read_text_file'],
  ] as const)('%s %s (unknown or MCP) is not read-only, whatever its name says', (agent, name) => {
    expect(isReadOnly(agent, name)).toBe(false);
  });

  it('does not borrow a flag from another agent', () => {
    expect(isReadOnly('claude-code', 'Read')).toBe(true);
    expect(isReadOnly('opencode', 'Read')).toBe(false);
    expect(isReadOnly('docker-agent', 'Grep')).toBe(false);
  });
});

describe('catalogue', () => {
  it('refuses an agent it does not know', () => {
    expect(() => catalogue('aider' as AgentId)).toThrow(/no tool catalogue/);
    expect(isReadOnly('aider' as AgentId, 'Read')).toBe(false);
  });
});
