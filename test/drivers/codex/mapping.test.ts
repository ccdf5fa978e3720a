// Other agents' calls as Codex makes them and back (src/drivers/codex/mapping.ts): a shell command is
// exec_command, a write of whole lines an apply_patch adding that file; nothing else has an exact patch.
import { describe, expect, it } from 'vitest';
import { addedFile, addFilePatch, codexCall, recordedFor } from '../../../src/drivers/codex/mapping.js';
import { toolCommentary } from '../../../src/replay/catalogue/index.js';
import { normalizeInput } from '../../../src/replay/match.js';

const cwd = '/home/ada/todo-api';

describe('codexCall: a recorded call as Codex would make it', () => {
  it('makes a shell command of any agent exec_command', () => {
    expect(codexCall('claude-code', 'Bash', { command: 'npm test', description: 'Run' }, cwd)).toEqual({
      name: 'exec_command',
      input: { cmd: 'npm test' },
    });
    expect(codexCall('opencode', 'bash', { command: 'ls', description: 'List' }, cwd)).toEqual({
      name: 'exec_command',
      input: { cmd: 'ls' },
    });
    expect(codexCall('docker-agent', 'shell', { cmd: 'pwd' }, cwd)).toEqual({
      name: 'exec_command',
      input: { cmd: 'pwd' },
    });
  });

  it('makes a write of whole lines under the workspace a free-form patch adding the file, by its relative path', () => {
    expect(
      codexCall('claude-code', 'Write', { file_path: `${cwd}/docs/N.md`, content: 'a\n\nb\n' }, cwd),
    ).toEqual({
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Add File: docs/N.md\n+a\n+\n+b\n*** End Patch\n',
      freeform: true,
    });
    // No exact patch: a last line without its newline, a file outside the workspace, an edit.
    expect(
      codexCall('claude-code', 'Write', { file_path: `${cwd}/N.md`, content: 'a' }, cwd),
    ).toBeUndefined();
    expect(
      codexCall('claude-code', 'Write', { file_path: '/etc/N.md', content: 'a\n' }, cwd),
    ).toBeUndefined();
    expect(
      codexCall('claude-code', 'Edit', { file_path: `${cwd}/N.md`, old_string: 'a', new_string: 'b' }, cwd),
    ).toBeUndefined();
    expect(codexCall('codex', 'exec_command', { cmd: 'ls' }, cwd)).toEqual({
      name: 'exec_command',
      input: { cmd: 'ls' },
    });
  });
});

describe('recordedFor: the recorded calls a Codex call may stand for', () => {
  it('looks a command up as the source agent’s shell call, and an added file as its write', () => {
    expect(recordedFor('claude-code', 'exec_command', { cmd: 'npm test' }, cwd)).toEqual([
      { name: 'Bash', input: { command: 'npm test' } },
    ]);
    const patch = addFilePatch('docs/N.md', 'a\nb\n') as string;
    expect(recordedFor('claude-code', 'apply_patch', { input: patch }, cwd)).toEqual([
      { name: 'Write', input: { file_path: `${cwd}/docs/N.md`, content: 'a\nb\n' } },
    ]);
    expect(recordedFor('opencode', 'apply_patch', { input: patch }, cwd)).toEqual([
      { name: 'write', input: { filePath: `${cwd}/docs/N.md`, content: 'a\nb\n' } },
    ]);
    expect(recordedFor('codex', 'apply_patch', { input: patch }, cwd)).toEqual([
      { name: 'apply_patch', input: { input: patch } },
    ]);
    // A patch that updates, or adds two files, is no write.
    expect(
      recordedFor(
        'claude-code',
        'apply_patch',
        { input: '*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch\n' },
        cwd,
      ),
    ).toEqual([]);
    expect(recordedFor('claude-code', 'view_image', { path: 'a.png' }, cwd)).toEqual([]);
  });

  it('reads back exactly the patch it writes, and nothing looser', () => {
    for (const content of ['', 'one\n', 'a\n\n  b\n'])
      expect(addedFile(addFilePatch('f.txt', content) as string)).toEqual({ path: 'f.txt', content });
    expect(
      addedFile('*** Begin Patch\n*** Add File: a\n+x\n*** Add File: b\n+y\n*** End Patch\n'),
    ).toBeUndefined();
    expect(addedFile('*** Add File: a\n+x\n')).toBeUndefined();
  });

  it('matches a shell command with or without what it says it does: the description is commentary', () => {
    const context = { commentary: (tool: string) => toolCommentary('claude-code', tool) };
    expect(normalizeInput('Bash', { command: 'npm test', description: 'Run it' }, context)).toEqual(
      normalizeInput('Bash', { command: 'npm test' }, context),
    );
    expect(normalizeInput('Write', { file_path: 'a', description: 'x' }, context)).toEqual({
      file_path: 'a',
      description: 'x',
    });
  });
});
