import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCode } from '../../../src/sources/claude-code/index.js';
import { codex } from '../../../src/sources/codex/index.js';
import { codexRoots } from '../../../src/sources/codex/paths.js';
import { adapters } from '../../../src/sources/registry.js';
import { root, tempDir } from '../../helpers/cli.js';

// Every folder is in the repository: one that is missing throws instead of shrinking the check.
const jsonl = (folder: string): string[] =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return jsonl(path);
    return name.endsWith('.jsonl') ? [path] : [];
  });

const codexFiles = [
  ...jsonl(join(root, 'test', 'fixtures', 'codex')),
  ...jsonl(join(root, 'test', 'fixtures', 'real', 'codex')),
];
const claudeFiles = [
  ...jsonl(join(root, 'test', 'fixtures', 'claude-code')),
  ...jsonl(join(root, 'sample-sessions')),
  ...jsonl(join(root, 'test', 'fixtures', 'real', 'claude-code')),
];

describe('codex detection', () => {
  it('claims every Codex rollout, and the Claude Code detector claims none of them', () => {
    expect(codexFiles.length).toBeGreaterThan(10);
    for (const file of codexFiles) {
      expect(codex.detect(file), file).toBe(true);
      expect(claudeCode.detect(file), file).toBe(false);
    }
  });

  it('claims no Claude Code transcript (it is tried first)', () => {
    expect(claudeFiles.length).toBeGreaterThan(5);
    for (const file of claudeFiles) expect(codex.detect(file), file).toBe(false);
  });

  it('comes before Claude Code in the registry', () => {
    const agents = adapters.map((adapter) => adapter.agent);
    expect(agents.indexOf('codex')).toBeLessThan(agents.indexOf('claude-code'));
  });

  describe('edge cases', () => {
    let dir: ReturnType<typeof tempDir>;
    beforeEach(() => {
      dir = tempDir();
    });
    afterEach(() => dir.remove());

    it('recognises a session_meta line longer than the sniff window by how it opens', () => {
      const file = join(dir.path, 'big-meta.jsonl');
      const meta = {
        timestamp: '2026-03-01T10:00:00.000Z',
        type: 'session_meta',
        payload: { id: 'x', base_instructions: { text: 'y'.repeat(200_000) } },
      };
      writeFileSync(file, `${JSON.stringify(meta)}\n`);
      expect(codex.detect(file)).toBe(true);
    });

    it('needs session_meta first, unless the file is named rollout-*.jsonl', () => {
      const item = JSON.stringify({
        timestamp: '2026-03-01T10:00:00.000Z',
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [] },
      });
      const plain = join(dir.path, 'notes.jsonl');
      const named = join(dir.path, 'rollout-2026-03-01T10-00-00-0196a000-0000-7000-8000-000000000001.jsonl');
      writeFileSync(plain, `${item}\n`);
      writeFileSync(named, `${item}\n`);
      expect(codex.detect(plain)).toBe(false);
      expect(codex.detect(named)).toBe(true);
    });

    it('rejects other JSON lines and other extensions', () => {
      const other = join(dir.path, 'other.jsonl');
      writeFileSync(other, '{"type":"session_meta"}\n{"a":1}\n');
      expect(codex.detect(other)).toBe(false);
      const json = join(dir.path, 'rollout-x.json');
      writeFileSync(json, '{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n');
      expect(codex.detect(json)).toBe(false);
    });
  });
});

describe('codex default roots', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('reads $CODEX_HOME/sessions, else ~/.codex/sessions, and only a folder that exists', () => {
    const home = join(dir.path, 'home');
    const custom = join(dir.path, 'custom');
    expect(codexRoots({ HOME: home })).toEqual([]);
    mkdirSync(join(home, '.codex', 'sessions'), { recursive: true });
    expect(codexRoots({ HOME: home })).toEqual([join(home, '.codex', 'sessions')]);
    expect(codexRoots({ HOME: home, CODEX_HOME: custom })).toEqual([]);
    mkdirSync(join(custom, 'sessions'), { recursive: true });
    expect(codexRoots({ HOME: home, CODEX_HOME: custom })).toEqual([join(custom, 'sessions')]);
  });
});
