import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, root, run, tempDir } from '../helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let db: string;
beforeAll(async () => {
  dir = tempDir();
  db = join(dir.path, 'replay.db');
  const ingest = await run(['ingest', 'sample-sessions', '--db', db]);
  expect(ingest.exitCode).toBe(0);
});
afterAll(() => dir.remove());

describe('replay-history binary', () => {
  it('lists sessions as JSON with counts, kinds and the sub-agent link', async () => {
    const result = await run(['sessions', '--db', db, '--json']);
    expect(result.exitCode).toBe(0);
    const sessions = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(sessions).toHaveLength(6);
    const fix = sessions.find((s) => String(s.sourceId).startsWith('6f1c2a34'));
    expect(fix).toMatchObject({
      agent: 'claude-code',
      kind: 'main',
      turns: 5,
      toolCalls: 5,
      unansweredToolCalls: 0,
    });
    expect(fix?.cwd).toBe('/home/ada/todo-api');
    const parent = sessions.find((s) => s.sourceId === '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d');
    expect(parent).toMatchObject({ turns: 6, toolCalls: 4, unansweredToolCalls: 1, continues: null });
    const child = sessions.find((s) => s.kind === 'subagent' && s.agent === 'claude-code');
    expect(child).toMatchObject({
      parentId: parent?.id,
      spawnedBy: 'toolu_02Task1',
      title: 'Survey todo-api',
      turns: 3,
    });
  });

  it('filters by agent and rejects an unknown one with exit 2', async () => {
    const none = await run(['sessions', '--db', db, '--agent', 'codex', '--json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    const bad = await run(['sessions', '--db', db, '--agent', 'cursor']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("error: unknown agent 'cursor'");
    expect(bad.stderr).toContain('hint: use one of: claude-code, opencode, codex, docker-agent');
  });

  it('shows a transcript with injected text and the compaction marked, traced to file:line', async () => {
    const result = await run(['show', '9a8b7c6d', '--db', db]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('── user (injected, compaction summary)');
    expect(result.stdout).toContain('[the model saw nothing before this summary]');
    expect(result.stdout).toMatch(/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d\.jsonl:9/);
    expect(result.stdout).toContain('→ Bash({"command":"npm test"}) [no result recorded]');
  });

  it('shows exactly the context of one turn: after the compaction, the summary and what followed', async () => {
    const result = await run(['show', '9a8b7c6d', '--turn', '4', '--db', db, '--json']);
    expect(result.exitCode).toBe(0);
    const turn = JSON.parse(result.stdout);
    expect(turn.context[0]).toMatchObject({ role: 'user', compaction: true });
    expect(turn.context).toHaveLength(2);
    expect(turn.response.parts[0]).toMatchObject({ type: 'tool_call', name: 'Edit' });
    const out = await run(['show', '9a8b7c6d', '--turn', '9', '--db', db]);
    expect(out.exitCode).toBe(2);
    expect(out.stderr).toContain('has 6 turn(s); no turn 9');
  });

  it('lists the candidates of an ambiguous prefix and exits 2; an unknown one gets a hint', async () => {
    const list = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as { id: string }[];
    // The empty prefix matches every session: the main sessions are not each other's sub-agents.
    const ambiguous = await run(['show', '', '--db', db]);
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toContain('matches 6 sessions:');
    for (const session of list) expect(ambiguous.stderr).toContain(session.id.slice(0, 12));
    expect(ambiguous.stderr).toContain('hint: give a longer prefix');
    const unknown = await run(['show', 'zzzz', '--db', db]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toBe(
      "error: no session matches 'zzzz'\nhint: run replay-history sessions to list them",
    );
  });

  it('explains every command with an example in --help, and exits 2 on a usage error', async () => {
    for (const command of ['ingest', 'sessions', 'show', 'stats']) {
      const help = await run([command, '--help']);
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toContain('--db <file>');
      expect(help.stdout).toMatch(/Examples:\n {2}\$ replay-history /);
    }
    const top = await run(['--help']);
    expect(top.stdout).toContain('Exit codes: 0 success');
    const wrong = await run(['ingest', '--no-such-flag']);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain("error: unknown option '--no-such-flag'");
  });

  it('ingest, show, sessions and stats: every option has an example, and each default is said once', async () => {
    for (const command of ['ingest', 'show', 'sessions', 'stats']) {
      const help = (await run([command, '--help'])).stdout;
      const [usage = '', examples = ''] = help.split('\nExamples:\n');
      // Each option with its description, continuation lines joined.
      const options = usage
        .slice(usage.indexOf('\nOptions:\n'))
        .split(/\n(?= {2}-)/)
        .slice(1)
        .map((text) => text.replace(/\s+/g, ' ').trim());
      expect(options.length, command).toBeGreaterThan(2);
      for (const option of options) {
        const flag = option.match(/--[\w-]+/)?.[0] ?? '';
        if (flag === '--help') continue;
        // Shown in use: in an example, or with an e.g. of its own.
        expect(examples.includes(flag) || option.includes('e.g.'), `${command} ${flag}`).toBe(true);
        expect(option.match(/default/g) ?? [], `${command}: ${option}`).toHaveLength(
          option.includes('(default:') ? 1 : 0,
        );
        expect(option.match(/REPLAY_HISTORY_DB/g)?.length ?? 0, option).toBeLessThanOrEqual(1);
        expect(option, command).not.toMatch(/\(default: (\[\]|false)\)/);
      }
    }
  });

  it('refuses a store written by a newer version, exit 2, and does not touch it', async () => {
    const copy = join(dir.path, 'future.db');
    cpSync(db, copy);
    const raw = new Database(copy);
    raw.prepare("INSERT INTO migrations (name, applied_at) VALUES ('m042_future', 'x')").run();
    raw.close();
    const before = readFileSync(copy);
    const result = await run(['sessions', '--db', copy]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      'was written by a newer version of replay-history (unknown migration m042_future)',
    );
    expect(result.stderr).toContain('hint: upgrade replay-history');
    expect(result.stderr).not.toContain('    at ');
    expect(readFileSync(copy).equals(before)).toBe(true);
  });

  it('with no path reads the default log directories, honouring CLAUDE_CONFIG_DIR', async () => {
    const config = join(dir.path, 'claude-config');
    cpSync(join(root, 'sample-sessions', 'claude-code'), join(config, 'projects'), { recursive: true });
    const store = join(dir.path, 'default-paths.db');
    // A private home: only the Claude directory exists, so only it is read.
    const home = join(dir.path, 'home');
    const isolated = { HOME: home, XDG_DATA_HOME: join(home, 'data'), CODEX_HOME: join(home, 'codex') };
    const result = await run(['ingest', '--db', store, '--json'], {
      env: { ...isolated, CLAUDE_CONFIG_DIR: config },
    });
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.paths.map((p: { path: string }) => p.path)).toEqual([join(config, 'projects')]);
    expect(report.paths[0].sessions.new).toBe(3);
    const empty = join(dir.path, 'no-home');
    const none = await run(['ingest', '--db', store], {
      env: {
        HOME: empty,
        XDG_DATA_HOME: join(empty, 'data'),
        CODEX_HOME: join(empty, 'codex'),
        CLAUDE_CONFIG_DIR: '',
      },
    });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('error: no paths given and no agent log directory found on this machine');
  });

  it('draws a progress bar on a terminal only, on stderr, and erases it', async () => {
    const tty = join(dir.path, 'tty.db');
    const typescript = join(dir.path, 'typescript');
    // `script` gives the program a real pseudo-terminal, as an interactive user has.
    await execa(
      'script',
      ['-qec', `node ${bin} ingest ${join(root, 'sample-sessions')} --db ${tty}`, typescript],
      {
        reject: false,
        env: { CI: '' },
      },
    );
    expect(existsSync(typescript)).toBe(true);
    const screen = readFileSync(typescript, 'utf8');
    expect(screen).toMatch(/ingest [█░]{24} 6\/6 files/);
    const piped = await run(['ingest', 'sample-sessions', '--db', join(dir.path, 'piped.db')]);
    expect(piped.stderr).toBe('');
  });
});
