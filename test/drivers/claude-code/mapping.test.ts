import { describe, expect, it } from 'vitest';
import { claudeCall, recordedFor } from '../../../src/drivers/claude-code/mapping.js';

describe('Claude Code ↔ other agents’ tools', () => {
  it('names a recorded opencode call as Claude Code makes it, and back', () => {
    expect(claudeCall('opencode', 'read', { filePath: '/w/a.js' })).toEqual({
      name: 'Read',
      input: { file_path: '/w/a.js' },
    });
    expect(recordedFor('opencode', 'Read', { file_path: '/w/a.js' })).toEqual([
      { name: 'read', input: { filePath: '/w/a.js' } },
    ]);
    // opencode's sub-agent is `general`, Claude Code's `general-purpose`; 2.1.3xx calls the tool Agent.
    expect(
      claudeCall('opencode', 'task', { description: 'd', prompt: 'p', subagent_type: 'general' }),
    ).toEqual({
      name: 'Agent',
      input: { description: 'd', prompt: 'p', subagent_type: 'general-purpose' },
    });
  });

  it('goes through opencode’s names for Codex: a shell command is Bash', () => {
    expect(claudeCall('codex', 'exec_command', { cmd: 'ls -la' })).toEqual({
      name: 'Bash',
      input: { command: 'ls -la' },
    });
    expect(recordedFor('codex', 'Bash', { command: 'ls -la' }).map((call) => call.name)).toContain(
      'exec_command',
    );
  });

  it('a Claude Code session’s older sub-agent tool is Task; a call with no counterpart maps to nothing', () => {
    expect(recordedFor('claude-code', 'Agent', { prompt: 'p' }).map((call) => call.name)).toEqual([
      'Agent',
      'Task',
    ]);
    expect(claudeCall('claude-code', 'Task', { prompt: 'p' })).toEqual({
      name: 'Agent',
      input: { prompt: 'p' },
    });
    expect(claudeCall('opencode', 'todowrite', { todos: [] })).toBeUndefined();
    expect(recordedFor('opencode', 'TodoWrite', { todos: [] })).toEqual([]);
  });
});
