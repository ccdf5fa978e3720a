import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharegptProblems } from '../export/properties.js';
import { bin, ran, run, tempDir } from '../helpers/cli.js';
import { type ModelServer, startModelServer } from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

// `export` with the real binary: the sample sessions and a replay run of them, every format, the split, the
// duplicate check, redaction of secrets planted in tool output, and what goes to stdout, stderr and files.
let dir: ReturnType<typeof tempDir>;
let env: Record<string, string>;
let server: ModelServer;

const lines = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

const exported = (args: string[]) => run(['export', ...args], { env });

beforeAll(async () => {
  dir = tempDir();
  env = { XDG_DATA_HOME: join(dir.path, 'data'), XDG_CACHE_HOME: join(dir.path, 'cache') };
  expect((await run(['ingest', 'sample-sessions'], { env })).exitCode).toBe(0);
  // A model that answers differently from the recording: every replayed turn is a preference pair.
  server = await startModelServer({ responders: [() => ({ text: 'A different answer.' })] });
});
afterAll(async () => {
  await server.close();
  dir.remove();
});

describe('export from the original sessions', () => {
  it('writes OpenAI rows to stdout by default and the report to stderr; every line is valid', async () => {
    const result = await exported([]);
    expect(result.exitCode).toBe(0);
    const rows = lines(result.stdout);
    // 5 sessions with turns, two of them compacted (a sample per segment).
    expect(rows).toHaveLength(7);
    for (const row of rows) {
      const ids = new Set<string>();
      for (const message of row.messages) {
        expect(['system', 'user', 'assistant', 'tool']).toContain(message.role);
        for (const call of message.tool_calls ?? []) {
          ids.add(call.id);
          expect(typeof JSON.parse(call.function.arguments)).toBe('object');
        }
        if (message.role === 'tool') expect(ids.has(message.tool_call_id)).toBe(true);
        if (message.role === 'assistant') expect([0, 1]).toContain(message.weight);
      }
    }
    expect(result.stderr).toMatch(
      /export openai from original, per session, training on all-assistant: 7 sample\(s\) from 6 session\(s\)/,
    );
    expect(result.stderr).toMatch(/skipped {5}1 \(no assistant turns: 1\)/);
  });

  it('writes each format to --out with its companion file, and --json reports on stdout', async () => {
    for (const format of ['openai', 'trl', 'sharegpt', 'axolotl']) {
      const out = join(dir.path, `${format}.jsonl`);
      const result = await exported(['--format', format, '--unit', 'user-turn', '--out', out, '--json']);
      expect(result.exitCode, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(report).toMatchObject({ format, unit: 'user-turn', files: [out] });
      expect(report.samples.written).toBe(lines(readFileSync(out, 'utf8')).length);
      expect(report.tokens.total).toBeGreaterThan(report.tokens.trained);
      expect(report.tokens.trained).toBeGreaterThan(0);
      if (format === 'sharegpt') {
        for (const row of lines(readFileSync(out, 'utf8'))) expect(sharegptProblems(row)).toEqual([]);
        const info = JSON.parse(readFileSync(join(dir.path, 'dataset_info.json'), 'utf8'));
        expect(JSON.stringify(info)).toContain('sharegpt.jsonl');
      }
    }
    // Nothing half-written is left beside the outputs.
    expect(readdirSync(dir.path).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('splits by session, the same way for the same seed, and never a session on both sides', async () => {
    const out = join(dir.path, 'split', 'data.jsonl');
    mkdirSync(join(dir.path, 'split'));
    const args = ['--unit', 'model-turn', '--split', '0.5', '--seed', '3', '--out', out, '--json'];
    const first = JSON.parse((await exported(args)).stdout);
    const train = readFileSync(join(dir.path, 'split', 'data.train.jsonl'), 'utf8');
    const validation = readFileSync(join(dir.path, 'split', 'data.validation.jsonl'), 'utf8');
    expect(first.samples.train + first.samples.validation).toBe(30);
    expect(first.samples.train).toBeGreaterThan(0);
    expect(first.samples.validation).toBeGreaterThan(0);
    // Again: byte-identical.
    await exported(args);
    expect(readFileSync(join(dir.path, 'split', 'data.train.jsonl'), 'utf8')).toBe(train);
    expect(readFileSync(join(dir.path, 'split', 'data.validation.jsonl'), 'utf8')).toBe(validation);
    // A session's turns share their first user message: no first message may be on both sides.
    const firstUser = (row: { messages: { role: string; content: string }[] }) =>
      row.messages.find((m) => m.role === 'user')?.content;
    const trainFirsts = new Set(lines(train).map(firstUser));
    for (const row of lines(validation)) expect(trainFirsts.has(firstUser(row))).toBe(false);
    // Without --out there is nowhere to put two files.
    const refused = await exported(['--split', '0.9']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--split writes two files');
  });

  it('--min-turns leaves out short sessions and says so; --include-injected keeps harness text', async () => {
    // The sample sessions have 14, 5, 6, 3, 2 and 0 model turns.
    const result = await exported(['--min-turns', '5', '--json', '--out', join(dir.path, 'long.jsonl')]);
    const report = JSON.parse(result.stdout);
    expect(report.skipped).toEqual({ 'fewer than 5 model turns': 3 });
    expect(report.sessions).toBe(6);
    const plain = JSON.parse((await exported(['--json', '--out', join(dir.path, 'plain.jsonl')])).stdout);
    const injected = JSON.parse(
      (await exported(['--include-injected', '--json', '--out', join(dir.path, 'injected.jsonl')])).stdout,
    );
    expect(injected.tokens.total).toBeGreaterThan(plain.tokens.total);
  });

  it('drops exact duplicates and counts them', async () => {
    const copies = tempDir();
    try {
      const cwd = join(copies.path, 'work');
      const store = join(copies.path, 'replay.db');
      for (const n of [1, 2]) {
        writeTranscript(join(copies.path, `copy-${n}.jsonl`), {
          sessionId: `c0c0c0c${n}-0000-4000-8000-00000000000${n}`,
          cwd,
          prompt: 'Say hello.',
          steps: [],
          answer: 'Hello.',
        });
      }
      expect((await run(['ingest', copies.path, '--db', store], { env })).exitCode).toBe(0);
      const result = await run(['export', '--db', store, '--json', '--out', join(copies.path, 'out.jsonl')], {
        env,
      });
      expect(JSON.parse(result.stdout)).toMatchObject({ samples: { written: 1 }, duplicates: 1 });
    } finally {
      copies.remove();
    }
  });
});

describe('export from a replay run', () => {
  it('per model turn, training on the replayed answer only; dpo pairs where the answers differ', async () => {
    const replay = await run(
      [
        'replay',
        'sample-sessions',
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
    const runId = JSON.parse(replay.stdout).id as string;

    const sft = await exported(['--from', `run:${runId}`, '--out', join(dir.path, 'run.jsonl'), '--json']);
    expect(sft.exitCode, sft.stderr).toBe(0);
    const rows = lines(readFileSync(join(dir.path, 'run.jsonl'), 'utf8'));
    expect(rows).toHaveLength(30);
    for (const row of rows) {
      const assistants = row.messages.filter((m: { role: string }) => m.role === 'assistant');
      expect(assistants.at(-1)).toMatchObject({ content: 'A different answer.', weight: 1 });
      for (const earlier of assistants.slice(0, -1)) expect(earlier.weight).toBe(0);
    }

    const dpo = await exported([
      '--from',
      'latest',
      '--format',
      'dpo',
      '--out',
      join(dir.path, 'dpo.jsonl'),
      '--json',
    ]);
    expect(dpo.exitCode, dpo.stderr).toBe(0);
    const pairs = lines(readFileSync(join(dir.path, 'dpo.jsonl'), 'utf8'));
    expect(pairs).toHaveLength(30);
    for (const pair of pairs) {
      expect(pair.rejected).toEqual([
        expect.objectContaining({ role: 'assistant', content: 'A different answer.' }),
      ]);
      expect(pair.chosen[0].content).not.toBe('A different answer.');
      expect(pair.prompt.length).toBeGreaterThan(0);
    }
    // The same cleaning as the SFT rows of the same conversations: no harness note in a prompt.
    const said = (row: { role: string; content: unknown }[]) =>
      row.filter((m) => m.role === 'user').map((m) => String(m.content));
    expect(
      rows.flatMap((row) => said(row.messages)).some((text) => text.includes('[Request interrupted')),
    ).toBe(false);
    expect(
      pairs.flatMap((pair) => said(pair.prompt)).some((text) => text.includes('[Request interrupted')),
    ).toBe(false);
    // The replay gave the model our catalogue's system prompt (the recordings have none); the chosen answers were
    // made without it, so no preference prompt holds it.
    const replayed = lines(readFileSync(join(dir.path, 'pairs.jsonl'), 'utf8'));
    expect(
      replayed.some((pair) => pair.sources?.system === 'catalogue' && pair.messages[0]?.role === 'system'),
    ).toBe(true);
    for (const pair of pairs)
      expect(pair.prompt.some((m: { role: string }) => m.role === 'system')).toBe(false);
    const units = await exported(['--from', 'latest', '--format', 'dpo', '--unit', 'session']);
    expect(units.exitCode).toBe(2);
    expect(units.stderr).toContain('--unit session does not apply to --format dpo');

    const wrongUnit = await exported(['--from', `run:${runId}`, '--unit', 'session']);
    expect(wrongUnit.exitCode).toBe(2);
    expect(wrongUnit.stderr).toContain('does not fit a forced-mode run');
  });

  it('refuses what cannot be: an unknown run, dpo from the original sessions, --train-on replayed without a run', async () => {
    const unknown = await exported(['--from', 'run:run_nope']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("no run matches 'run_nope'");
    const dpo = await exported(['--format', 'dpo']);
    expect(dpo.exitCode).toBe(2);
    expect(dpo.stderr).toContain('--format dpo needs a replay run');
    const replayed = await exported(['--train-on', 'replayed']);
    expect(replayed.exitCode).toBe(2);
  });
});

describe('redaction', () => {
  it('no secret planted in a tool output survives, and the report counts them by kind', async () => {
    const home = tempDir();
    try {
      const secrets = {
        openai: 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxT3BlbkFJAbCdEfGhIjKlMnOpQrSt',
        github: 'ghp_0123456789abcdefghijklmnopqrstuvwxyz',
        aws: 'AKIAIOSFODNN7REALKEY',
        jwt: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
        email: 'jane.doe@example.org',
        db: 'postgres://admin:s3cr3tPassw0rd@db.internal:5432/app',
      };
      const output = [
        `OPENAI_API_KEY=${secrets.openai}`,
        `GITHUB_TOKEN=${secrets.github}`,
        `aws_access_key_id = ${secrets.aws}`,
        `Authorization: Bearer ${secrets.jwt}`,
        `Author: Jane Doe <${secrets.email}>`,
        `DATABASE_URL=${secrets.db}`,
        '-----BEGIN RSA PRIVATE KEY-----',
        'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0',
        '-----END RSA PRIVATE KEY-----',
        'at /home/alice/project/src/app.ts:12',
      ].join('\n');
      const cwd = '/home/alice/project';
      writeTranscript(join(home.path, 'secret.jsonl'), {
        sessionId: 'd0d0d0d0-0000-4000-8000-000000000001',
        cwd,
        prompt: 'What is in .env?',
        steps: [{ calls: [{ id: 'toolu_1', name: 'Bash', input: { command: 'cat .env' }, result: output }] }],
        answer: 'It holds the keys.',
      });
      const store = join(home.path, 'replay.db');
      expect((await run(['ingest', home.path, '--db', store], { env })).exitCode).toBe(0);
      for (const format of ['openai', 'trl', 'sharegpt', 'axolotl']) {
        const result = await run(
          [
            'export',
            '--db',
            store,
            '--format',
            format,
            '--json',
            '--out',
            join(home.path, `${format}.jsonl`),
          ],
          { env },
        );
        expect(result.exitCode, result.stderr).toBe(0);
        const text = readFileSync(join(home.path, `${format}.jsonl`), 'utf8');
        for (const secret of [...Object.values(secrets), 'MIIEowIBAAKCAQEAu1SU1Lf', '/home/alice'])
          expect(text, `${format}: ${secret}`).not.toContain(secret);
        const report = JSON.parse(result.stdout);
        expect(
          Object.values(report.redactions as Record<string, number>).reduce((a, b) => a + b, 0),
        ).toBeGreaterThanOrEqual(8);
      }
      // --no-redact writes them as recorded; the store was never changed.
      const raw = await run(['export', '--db', store, '--no-redact'], { env });
      expect(raw.stdout).toContain(secrets.github);
    } finally {
      home.remove();
    }
  });
});

describe('streaming', () => {
  it('stops quietly when the reader goes away (| head)', async () => {
    const result = await ran(
      execa('sh', ['-c', `node ${bin} export --unit model-turn | head -c 200 > /dev/null`], {
        env: { ...process.env, ...env },
        reject: false,
      }),
    );
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toMatch(/EPIPE|Error/);
  });

  it('reports a full disk (stdout on /dev/full) instead of dying or claiming success', async () => {
    const result = await ran(
      execa('sh', ['-c', `node ${bin} export --unit model-turn > /dev/full`], {
        env: { ...process.env, ...env, NO_COLOR: '1' },
        reject: false,
      }),
    );
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/ENOSPC|no space/i);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('leaves no file under the real name when it cannot finish', async () => {
    const out = join(dir.path, 'nowhere', 'data.jsonl');
    const result = await exported(['--out', out]);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(out)).toBe(false);
  });
});
