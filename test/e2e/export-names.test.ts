import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run, tempDir } from '../helpers/cli.js';
import { type ModelServer, startModelServer } from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

// People's names (issue 22) with the real binary: names planted in Claude Code sessions the way tools print them
// (a git Author: line, an `ls -l` listing read through Read's line numbers, JSON with "created_by") are absent from
// every format and unit, also where a session only mentions a name another session taught; the report counts
// them; --no-redact shows them.
let dir: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let store: string;
let server: ModelServer;

/** Every string that must not survive: full names, their parts, the accounts. */
const NAMES = [
  'Priya Raman',
  'Priya',
  'Raman',
  'Ola Nordmann',
  'Nordmann',
  'kmensah',
  'research',
  'Zed Quinlan',
  'Quinlan',
];

beforeAll(async () => {
  dir = tempDir();
  env = { XDG_DATA_HOME: join(dir.path, 'data'), XDG_CACHE_HOME: join(dir.path, 'cache') };
  const logs = join(dir.path, 'logs');
  mkdirSync(logs);
  // Session A teaches Priya Raman (git log) and kmensah/research (ls -l through Read), and mentions Ola bare.
  writeTranscript(join(logs, 'a.jsonl'), {
    sessionId: 'a0a0a0a0-0000-4000-8000-000000000001',
    cwd: '/work/app',
    prompt: 'Who wrote the parser? Ola Nordmann said it was Zed Quinlan.',
    steps: [
      {
        text: 'Looking at the history.',
        calls: [
          {
            id: 'toolu_a1',
            name: 'Bash',
            input: { command: 'git log -1 src/parser.ts' },
            result:
              'commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c\nAuthor: Priya Raman <priya@example.com>\nDate:   Mon Feb 10 22:55:00 2026 +0100\n\n    parser: handle empty input',
          },
        ],
      },
      {
        calls: [
          {
            id: 'toolu_a2',
            name: 'Read',
            input: { file_path: '/work/app/listing.txt' },
            result:
              '     1→total 12\n     2→drwxr-xr-x  3 kmensah research 4096 Feb 10 22:55 .\n     3→-rw-r--r--  1 kmensah research  812 Feb 10 22:50 parser.ts\n     4→-rw-r--r--  1 root    wheel     10 Feb 10 22:50 LICENSE',
          },
        ],
      },
    ],
    answer: 'Priya wrote it; kmensah owns the folder.',
  });
  // Session B teaches Ola Nordmann (JSON a tool printed) and mentions Priya and kmensah bare.
  writeTranscript(join(logs, 'b.jsonl'), {
    sessionId: 'b0b0b0b0-0000-4000-8000-000000000002',
    cwd: '/work/app',
    prompt: 'Show the open issue. Priya Raman and kmensah asked for it.',
    steps: [
      {
        calls: [
          {
            id: 'toolu_b1',
            name: 'Bash',
            input: { command: 'bd show app-1 --json' },
            result:
              '{"id":"app-1","title":"Parser fails on empty input","status":"open","created_at":"2026-02-10T22:45:50+01:00","created_by":"Ola Nordmann"}',
          },
        ],
      },
    ],
    answer: 'Ola Nordmann opened app-1; Nordmann wants it fixed.',
  });
  store = join(dir.path, 'replay.db');
  expect((await run(['ingest', logs, '--db', store], { env })).exitCode).toBe(0);
  server = await startModelServer({
    responders: [() => ({ text: 'Priya Raman and Zed Quinlan, per kmensah.' })],
  });
});
afterAll(async () => {
  await server.close();
  dir.remove();
});

const exported = (args: string[]) =>
  run(['export', '--db', store, '--redact-name', 'Zed Quinlan', ...args], { env });

/** The names left in a text (whole words, case as planted). */
const left = (text: string) =>
  NAMES.filter((name) => new RegExp(`(?<![\\p{L}\\p{N}_])${name}(?![\\p{L}\\p{N}_])`, 'u').test(text));

describe('people’s names in every format', () => {
  it.each(['openai', 'trl', 'sharegpt', 'axolotl'])('%s, every unit', async (format) => {
    for (const unit of ['session', 'user-turn', 'model-turn']) {
      const out = join(dir.path, `${format}-${unit}.jsonl`);
      const result = await exported(['--format', format, '--unit', unit, '--out', out, '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      const text = readFileSync(out, 'utf8');
      expect(text.length).toBeGreaterThan(0);
      expect({ format, unit, left: left(text) }).toEqual({ format, unit, left: [] });
      expect(text).toContain('[REDACTED_PERSON_');
      const report = JSON.parse(result.stdout);
      expect(report.redactions.person).toBeGreaterThanOrEqual(text.split('[REDACTED_PERSON_').length - 1);
      // the email of the Author: line is an email, root and wheel stay
      expect(text).toContain('[REDACTED_EMAIL_1]');
      expect(text).toMatch(/root {4}wheel/);
    }
  });

  it('one number per person in one export, the same in every row', async () => {
    const out = join(dir.path, 'numbers.jsonl');
    expect((await exported(['--unit', 'model-turn', '--out', out])).exitCode).toBe(0);
    const text = readFileSync(out, 'utf8');
    const placeholders = new Set(text.match(/\[REDACTED_PERSON_\d+\]/g));
    // Zed Quinlan (given, so the first), Priya Raman, kmensah, research, Ola Nordmann: five people
    expect([...placeholders].sort()).toEqual([1, 2, 3, 4, 5].map((n) => `[REDACTED_PERSON_${n}]`));
    expect(text.includes('said it was [REDACTED_PERSON_1].'), 'given name').toBe(true);
    const one = (pattern: RegExp) =>
      new Set([...text.matchAll(pattern)].map((m) => m.slice(1).find(Boolean)));
    // where it was learned and where it is only mentioned (the other session): the same number
    const priya = one(
      /Author: \[REDACTED_PERSON_(\d)\] <\[REDACTED_EMAIL_1\]>|issue\. \[REDACTED_PERSON_(\d)\] and/g,
    );
    const ola = one(/created_by\\":\\"\[REDACTED_PERSON_(\d)\]|parser\? \[REDACTED_PERSON_(\d)\] said/g);
    const owner = one(
      /drwxr-xr-x {2}3 \[REDACTED_PERSON_(\d)\] \[REDACTED_PERSON_\d\]|and \[REDACTED_PERSON_(\d)\] asked/g,
    );
    expect([priya.size, ola.size, owner.size]).toEqual([1, 1, 1]);
    expect([...priya, ...ola, ...owner].every((n) => n !== '1')).toBe(true);
    // again: byte-identical
    const again = join(dir.path, 'numbers-again.jsonl');
    expect((await exported(['--unit', 'model-turn', '--out', again])).exitCode).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(text);
  });

  it('from a replay run: SFT rows and dpo pairs', async () => {
    const replay = await run(
      [
        'replay',
        '--all',
        '--db',
        store,
        '--model',
        'openai:other',
        '--base-url',
        server.baseURL,
        '--out',
        join(dir.path, 'pairs.jsonl'),
        '--json',
      ],
      { env },
    );
    expect(replay.exitCode, replay.stderr).toBe(0);
    for (const format of ['openai', 'trl', 'sharegpt', 'axolotl', 'dpo']) {
      const out = join(dir.path, `run-${format}.jsonl`);
      const result = await exported(['--from', 'latest', '--format', format, '--out', out, '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      const text = readFileSync(out, 'utf8');
      expect(text.length).toBeGreaterThan(0);
      expect({ format, left: left(text) }).toEqual({ format, left: [] });
      expect(JSON.parse(result.stdout).redactions.person).toBeGreaterThan(0);
    }
  });

  it('the text report counts them; --no-redact writes them as recorded', async () => {
    const report = await exported([]);
    expect(report.exitCode).toBe(0);
    expect(report.stderr).toMatch(/redacted {4}\d+ \(.*person: \d+/);
    const raw = await run(['export', '--db', store, '--no-redact', '--unit', 'model-turn'], { env });
    expect(raw.exitCode).toBe(0);
    expect(left(raw.stdout).sort()).toEqual([...NAMES].sort());
    expect(raw.stdout).not.toContain('[REDACTED_PERSON_');
    const both = await run(['export', '--db', store, '--no-redact', '--redact-name', 'Jane'], { env });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('--redact-name needs redaction on');
  });
});

describe('a real session', () => {
  it('the user’s name (JSON a tool printed, `bd show` owner lines, ls -l owner and group) is gone', async () => {
    const real = join(dir.path, 'real.db');
    expect((await run(['ingest', 'test/fixtures/real/claude-code', '--db', real], { env })).exitCode).toBe(0);
    const raw = await run(['export', '--db', real, '--no-redact'], { env });
    expect(raw.stdout.split('Marco Rotili').length - 1).toBeGreaterThanOrEqual(40);
    const result = await run(['export', '--db', real, '--json', '--out', join(dir.path, 'real.jsonl')], {
      env,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const text = readFileSync(join(dir.path, 'real.jsonl'), 'utf8');
    expect(text).not.toMatch(/Marco|Rotili|(?<![\w.])marco(?![\w@.])/);
    expect(JSON.parse(result.stdout).redactions.person).toBeGreaterThanOrEqual(100);
  });
});
