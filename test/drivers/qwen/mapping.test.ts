// Other agents' calls through Qwen Code (src/drivers/qwen/mapping.ts): a shell command and a whole-file write
// map exactly, both ways, with opencode's tables as the pivot; anything else has no Qwen counterpart.
import { describe, expect, it } from 'vitest';
import { opencodeCall, recordedNames } from '../../../src/drivers/opencode/mapping.js';
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

describe('the Gemini CLI lineage', () => {
  it('replays a Gemini CLI session through Qwen Code (and back) call for call', () => {
    const read = { file_path: '/w/README.md' };
    expect(qwenCall('gemini', 'read_file', read)).toEqual({ name: 'read_file', input: read });
    expect(recordedFor('gemini', 'read_file', read)).toEqual([{ name: 'read_file', input: read }]);
    expect(recordedFor('qwen', 'replace', { file_path: '/w/a' })).toEqual([
      { name: 'replace', input: { file_path: '/w/a' } },
    ]);
  });

  it('maps their shell and write to opencode’s exactly, and a shell call in another directory not at all', () => {
    expect(opencodeCall('gemini', 'run_shell_command', { command: 'ls', description: 'List' })).toEqual({
      name: 'bash',
      input: { command: 'ls', description: 'List' },
    });
    expect(opencodeCall('qwen', 'write_file', { file_path: '/w/a', content: 'x' })).toEqual({
      name: 'write',
      input: { filePath: '/w/a', content: 'x' },
    });
    expect(recordedNames('qwen', 'bash', { command: 'ls', description: '' })).toEqual([
      { name: 'run_shell_command', input: { command: 'ls' } },
    ]);
    // Renaming would drop what made the call do what it did: no counterpart.
    expect(opencodeCall('gemini', 'run_shell_command', { command: 'ls', dir_path: 'src' })).toBeUndefined();
    expect(
      opencodeCall('qwen', 'write_file', { file_path: '/w/a', content: 'x', record_as_artifact: true }),
    ).toBeUndefined();
    expect(opencodeCall('gemini', 'replace', { file_path: '/w/a' })).toBeUndefined();
  });
});
