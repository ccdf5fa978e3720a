// Qwen Code and Claude Code records share an envelope (uuid, parentUuid, sessionId, type): the Qwen detector must
// claim Qwen's files and none of Claude Code's, and come before Claude Code's broad one.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCode } from '../../../src/sources/claude-code/index.js';
import { qwen } from '../../../src/sources/qwen/index.js';
import { adapters } from '../../../src/sources/registry.js';
import { root, tempDir } from '../../helpers/cli.js';

// Every folder is in the repository: one that is missing throws instead of shrinking the check.
const jsonl = (folder: string): string[] =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return jsonl(path);
    return name.endsWith('.jsonl') ? [path] : [];
  });

const real = join(root, 'test', 'fixtures', 'real');
const qwenFile = join(
  real,
  'qwen-code-0.24.4/home/.qwen/projects/-home-ada-projects-demo-app/chats/a433a22d-6a3f-4757-a1ae-31e85c38a874.jsonl',
);
const claudeFiles = [
  ...jsonl(join(root, 'test', 'fixtures', 'claude-code')),
  ...jsonl(join(root, 'sample-sessions')),
  ...jsonl(join(real, 'claude-code')),
  ...jsonl(join(real, 'claude-code-2.1.328', 'projects')),
];

describe('qwen detection', () => {
  it('claims no Claude Code transcript, real or made', () => {
    expect(claudeFiles.length).toBeGreaterThan(10);
    for (const file of claudeFiles) expect(qwen.detect(file), file).toBe(false);
  });

  it('claims the real session, which Claude Code’s detector would also take: Qwen is tried first', () => {
    expect(qwen.detect(qwenFile)).toBe(true);
    expect(claudeCode.detect(qwenFile)).toBe(true);
    const agents = adapters.map((adapter) => adapter.agent);
    expect(agents.indexOf('qwen')).toBeLessThan(agents.indexOf('claude-code'));
    expect(adapters.find((adapter) => adapter.detect(qwenFile))?.agent).toBe('qwen');
  });

  describe('outside ~/.qwen', () => {
    let dir: ReturnType<typeof tempDir>;
    beforeEach(() => {
      dir = tempDir();
    });
    afterEach(() => dir.remove());

    it('knows a session by its records: Gemini-shaped message.parts, or a system record’s systemPayload', () => {
      const lines = readFileSync(qwenFile, 'utf8').split('\n');
      const moved = join(dir.path, 'session.jsonl');
      writeFileSync(moved, `${lines.join('\n')}`);
      expect(qwen.detect(moved)).toBe(true);
      const system = join(dir.path, 'system-first.jsonl');
      writeFileSync(system, `${lines[1]}\n`);
      expect(qwen.detect(system)).toBe(true);
      // The same envelope with Claude's message.content is Claude Code's.
      const record = JSON.parse(lines[0] as string);
      const claude = join(dir.path, 'claude.jsonl');
      writeFileSync(claude, `${JSON.stringify({ ...record, message: { role: 'user', content: 'hi' } })}\n`);
      expect(qwen.detect(claude)).toBe(false);
      expect(claudeCode.detect(claude)).toBe(true);
    });

    it('takes any .jsonl under .qwen/projects/<slug>/chats/ by its path, whatever its first line holds', () => {
      const chats = join(dir.path, '.qwen', 'projects', '-home-x', 'chats');
      mkdirSync(chats, { recursive: true });
      const file = join(chats, 'b1.jsonl');
      writeFileSync(
        file,
        `${JSON.stringify({ type: 'user', uuid: 'x', message: { parts: [{ text: 'y'.repeat(70_000) }] } })}\n`,
      );
      expect(qwen.detect(file)).toBe(true);
      expect(qwen.detect(join(dir.path, 'notes.txt'))).toBe(false);
    });
  });
});
