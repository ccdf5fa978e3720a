// Other agents' calls through Qwen Code (src/drivers/qwen/mapping.ts): a shell command and a whole-file write
// map exactly, both ways, with opencode's tables as the pivot; anything else has no Qwen counterpart.
import { describe, expect, it } from 'vitest';
import { qwenCall, recordedFor } from '../../../src/drivers/qwen/mapping.js';

describe('qwen mapping', () => {
  it('makes a recorded shell command or write the Qwen call, and finds the recorded call again', () => {
    expect(qwenCall('claude-code', 'Bash', { command: 'npm test', description: 'Run the suite' })).toEqual({
      name: 'run_shell_command',
      input: { command: 'npm test' },
    });
    expect(qwenCall('opencode', 'write', { filePath: '/w/a.txt', content: 'x\n' })).toEqual({
      name: 'write_file',
      input: { file_path: '/w/a.txt', content: 'x\n' },
    });
    expect(recordedFor('claude-code', 'write_file', { file_path: '/w/a.txt', content: 'x\n' })).toEqual([
      { name: 'Write', input: { file_path: '/w/a.txt', content: 'x\n' } },
    ]);
    expect(recordedFor('opencode', 'run_shell_command', { command: 'ls' })).toEqual([
      { name: 'bash', input: { command: 'ls' } },
    ]);
  });

  it('keeps a Qwen session’s calls as they are, and has no counterpart for an edit', () => {
    expect(qwenCall('qwen', 'edit', { a: 1 })).toEqual({ name: 'edit', input: { a: 1 } });
    expect(recordedFor('qwen', 'edit', { a: 1 })).toEqual([{ name: 'edit', input: { a: 1 } }]);
    expect(
      qwenCall('claude-code', 'Edit', { file_path: '/w/a', old_string: 'a', new_string: 'b' }),
    ).toBeUndefined();
    expect(recordedFor('claude-code', 'edit', {})).toEqual([]);
  });
});
