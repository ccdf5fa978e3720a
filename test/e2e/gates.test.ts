// Issue 19: gates turn a replay into a CI verdict. Two recorded sessions, replayed in forced mode against a
// scripted model whose answers are chosen per session and turn, so every figure is known in advance:
//   A: three turns each calling Read on its own file, then the answer — the model makes every call (exact);
//   B: the same shape, but at turn 2 the model reads another file (differs).
// Recall and precision are then 5/6, one session of two diverged, first at turn 2, no misses, no failures.
// Each gate exits 4 exactly when its threshold is crossed, names B, and agrees between options, the gates file,
// `runs check` and JUnit; side effects (3) outrank a failed gate, a failed gate outranks failed turns (1).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root, run, tempDir } from '../helpers/cli.js';
import {
  type ChatRequest,
  type ModelServer,
  type ScriptedReply,
  startModelServer,
} from '../helpers/model-server.js';
import { writeTranscript } from '../helpers/transcript.js';

interface Verdict {
  gate: string;
  option: string;
  passed: boolean;
  figure: number | null;
  threshold: number;
  sessions: { sessionId: string; why: string }[];
}

let dir: ReturnType<typeof tempDir>;
let db: string;
let server: ModelServer;
let ids: { a: string; b: string };
/** What the scripted model does besides answering, per test. */
let fail: { session: 'a' | 'b'; turn: number } | undefined;
let touch: string | undefined;
/** The candidate model of `runs compare`: right where the baseline was wrong (B turn 2), wrong elsewhere. */
let candidate = false;

const file = (session: string, turn: number) => `/work/${session}/file-${turn}.txt`;

/** Session (by its prompt) and turn (by the tool results so far) of a forced-mode request. */
function answer(request: ChatRequest): ScriptedReply {
  const messages = request.messages ?? [];
  const prompt = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const session = prompt.includes('session A') ? 'a' : 'b';
  const turn = messages.filter((m) => m.role === 'tool').length + 1;
  if (touch) {
    writeFileSync(touch, 'changed while the replay ran\n');
    touch = undefined;
  }
  if (fail && fail.session === session && fail.turn === turn)
    return { error: { status: 500, message: 'scripted failure' } };
  if (turn > 3) return { text: candidate && session === 'a' ? 'Something else entirely.' : 'Done.' };
  const wrong = candidate ? session === 'a' && turn === 3 : session === 'b' && turn === 2;
  const path = wrong ? `/work/${session}/elsewhere.txt` : file(session, turn);
  return { toolCalls: [{ name: 'Read', arguments: { file_path: path } }] };
}

beforeAll(async () => {
  dir = tempDir('gates-');
  db = join(dir.path, 'store.db');
  const logs = join(dir.path, 'logs');
  mkdirSync(logs);
  for (const [key, id] of [
    ['a', 'aaaaaaaa-0000-4000-8000-000000000019'],
    ['b', 'bbbbbbbb-0000-4000-8000-000000000019'],
  ] as const) {
    const cwd = join(dir.path, key);
    mkdirSync(cwd);
    writeTranscript(join(logs, `${key}.jsonl`), {
      sessionId: id,
      cwd,
      prompt: `Read the files of session ${key.toUpperCase()}.`,
      steps: [1, 2, 3].map((turn) => ({
        calls: [
          {
            id: `${key}${turn}`,
            name: 'Read',
            input: { file_path: file(key, turn) },
            result: `content ${turn}`,
          },
        ],
      })),
      answer: 'Done.',
    });
  }
  expect((await run(['ingest', logs, '--db', db])).exitCode).toBe(0);
  const listed = JSON.parse((await run(['sessions', '--db', db, '--json'])).stdout) as {
    id: string;
    sourceId: string;
  }[];
  const idOf = (source: string) => listed.find((s) => s.sourceId === source)?.id ?? '';
  ids = { a: idOf('aaaaaaaa-0000-4000-8000-000000000019'), b: idOf('bbbbbbbb-0000-4000-8000-000000000019') };
  server = await startModelServer({ responders: [answer] });
}, 60_000);
afterAll(async () => {
  await server?.close();
  dir?.remove();
});

let outputs = 0;
/** A forced replay of both sessions with these gates; its exit code, output and the gates' verdicts. */
async function replay(...gates: string[]) {
  const out = join(dir.path, `pairs-${++outputs}.jsonl`);
  const targets = gates[0] === '--only' ? [gates[1] as string] : ['--all'];
  if (gates[0] === '--only') gates.splice(0, 2);
  const ran = await run([
    'replay',
    ...targets,
    '--model',
    'openai:scripted',
    '--base-url',
    server.baseURL,
    '--retries',
    '0',
    '--db',
    db,
    '--out',
    out,
    ...gates,
  ]);
  return ran;
}
const verdicts = (stdout: string) => (JSON.parse(stdout) as { gates?: Verdict[] }).gates ?? [];

describe('replay gates', () => {
  it('pass at the run’s own figures: exit 0, each verdict with its figure', async () => {
    const ran = await replay(
      '--min-recall',
      '83%',
      '--min-precision',
      '0.83',
      '--max-diverged',
      '50%',
      '--max-misses',
      '0',
      '--max-failed-turns',
      '0',
      '--diverge-after',
      '2',
      '--json',
    );
    expect(ran.exitCode, ran.stderr).toBe(0);
    const gates = verdicts(ran.stdout);
    expect(gates.map((v) => [v.gate, v.passed])).toEqual([
      ['minRecall', true],
      ['minPrecision', true],
      ['maxDiverged', true],
      ['maxMisses', true],
      ['maxFailedTurns', true],
      ['divergeAfter', true],
    ]);
    expect(gates[0]?.figure).toBeCloseTo(5 / 6, 10);
    expect(gates[2]?.figure).toBe(0.5);
    expect(gates[5]?.figure).toBe(2);
  });

  it('each fails exactly when crossed: exit 4, the figure, the threshold and the session that made it fail', async () => {
    for (const [option, value, why] of [
      ['--min-recall', '0.84', '2 of 3 recorded calls made'],
      ['--min-precision', '90%', '1 of 3 calls made not recorded'],
      ['--max-diverged', '0.49', 'diverged at turn 2'],
      ['--diverge-after', '3', 'diverged at turn 2'],
    ] as const) {
      const ran = await replay(option, value, '--json');
      expect(ran.exitCode, `${option} ${value}`).toBe(4);
      const [verdict] = verdicts(ran.stdout);
      expect(verdict).toMatchObject({ option, passed: false, sessions: [{ sessionId: ids.b, why }] });
    }
    // For people: the failed gate first, with its figure and the session.
    const said = await replay('--min-recall', '95%', '--max-misses', '0');
    expect(said.exitCode).toBe(4);
    expect(said.stdout).toContain('gates       1 passed, 1 failed (exit 4)');
    expect(said.stdout).toContain(
      `  FAILED --min-recall 95.0%: recall 83.3% (5 of 6 recorded calls made)\n           ${ids.b.slice(0, 12)}  2 of 3 recorded calls made\n`,
    );
    expect(said.stdout).toContain('passed --max-misses 0: 0 call(s) not in the recording');
  });

  it('reads the same gates from a TOML or JSON file, an option given beside it winning', async () => {
    const toml = join(dir.path, 'replay-history.toml');
    writeFileSync(toml, '[gates]\nmin_recall = "90%"\nmax_diverged = 0.5\n');
    const fromFile = await replay('--gates', toml, '--json');
    expect(fromFile.exitCode).toBe(4);
    expect(verdicts(fromFile.stdout).map((v) => [v.option, v.threshold, v.passed])).toEqual([
      ['--min-recall', 0.9, false],
      ['--max-diverged', 0.5, true],
    ]);
    const overridden = await replay('--gates', toml, '--min-recall', '0.8', '--json');
    expect(overridden.exitCode).toBe(0);
    const json = join(dir.path, 'gates.json');
    writeFileSync(json, JSON.stringify({ 'min-recall': 0.9, max_diverged: '50%' }));
    const fromJson = await replay('--gates', json, '--json');
    expect(verdicts(fromJson.stdout)).toEqual(verdicts(fromFile.stdout));
  });

  it('refuses a gates file it cannot take before anything runs: exit 2, no run made', async () => {
    const before = (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as unknown[]).length;
    const bad = join(dir.path, 'bad.toml');
    writeFileSync(bad, '[gates]\nmin_recal = 0.9\n');
    const unknown = await replay('--gates', bad);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('unknown gate min_recal');
    writeFileSync(bad, '[gates]\nmin_recall = "150%"\n');
    expect((await replay('--gates', bad)).stderr).toContain('takes a share from 0 to 1');
    expect((await replay('--max-misses', '-1')).exitCode).toBe(2);
    expect((await replay('--gates', join(dir.path, 'none.toml'))).stderr).toContain(
      'cannot read it (ENOENT)',
    );
    const after = (JSON.parse((await run(['runs', '--db', db, '--json'])).stdout) as unknown[]).length;
    expect(after).toBe(before);
    expect(server.chatRequests().length).toBeGreaterThan(0);
  });

  it('judges a finished run the same way with runs check, and writes JUnit: a test case per session', async () => {
    const made = await replay('--json');
    expect(made.exitCode).toBe(0);
    const runId = (JSON.parse(made.stdout) as { id: string }).id;
    const checked = await run(['runs', 'check', runId, '--db', db, '--min-recall', '0.9', '--json']);
    expect(checked.exitCode).toBe(4);
    expect(verdicts(checked.stdout)).toMatchObject([
      { option: '--min-recall', passed: false, sessions: [{ sessionId: ids.b }] },
    ]);
    expect((await run(['runs', 'check', runId, '--db', db, '--min-recall', '0.8'])).exitCode).toBe(0);
    const none = await run(['runs', 'check', runId, '--db', db]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('runs check needs a gate');
    // `latest` is the run started last, wherever a run id is taken
    const latest = await run(['runs', 'check', 'latest', '--db', db, '--min-recall', '0.9', '--json']);
    expect(latest.exitCode).toBe(4);
    expect(latest.stdout).toBe(checked.stdout);
    const shown = await run(['runs', 'latest', '--db', db, '--json']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: runId });
    const empty = join(dir.path, 'no-runs.db');
    expect((await run(['ingest', join(dir.path, 'logs'), '--db', empty])).exitCode).toBe(0);
    const nothing = await run(['runs', 'check', 'latest', '--db', empty, '--min-recall', '0.9']);
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toContain('no replay run yet: latest names none');
    const junit = join(dir.path, 'replay.xml');
    const judged = await replay('--min-recall', '0.9', '--junit', junit);
    expect(judged.exitCode).toBe(4);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toContain('tests="3" failures="1"');
    expect(xml).toContain(`<testcase classname="replay-history.replay" name="session ${ids.a}"/>`);
    expect(xml).toMatch(
      new RegExp(
        `name="session ${ids.b}">\\s*<failure type="gate" message="--min-recall 90.0% failed \\(recall 83.3%`,
      ),
    );
    expect(xml).toContain('name="no side effects under');
  });
});

describe('exit codes when several apply', () => {
  it('a failed gate outranks failed turns (4 over 1); failed turns alone are 1', async () => {
    fail = { session: 'a', turn: 4 };
    try {
      expect((await replay()).exitCode).toBe(1);
      expect((await replay('--max-failed-turns', '1')).exitCode).toBe(1);
      const gated = await replay('--max-failed-turns', '0', '--json');
      expect(gated.exitCode).toBe(4);
      expect(verdicts(gated.stdout)[0]).toMatchObject({
        figure: 1,
        sessions: [{ sessionId: ids.a, why: '1 failed turn(s)' }],
      });
    } finally {
      fail = undefined;
    }
  });

  it('side effects outrank a failed gate (3 over 4), and the gate is still said', async () => {
    touch = join(dir.path, 'a', 'appeared.txt');
    const ran = await replay('--min-recall', '0.9');
    expect(ran.exitCode).toBe(3);
    expect(ran.stdout).toContain('FAILED --min-recall 90.0%');
    expect(ran.stdout).toContain('appeared.txt');
  });
});

describe('runs compare', () => {
  it('lists every turn that improved or regressed, the deltas, and the sessions only one run holds', async () => {
    const idOf = (ran: { stdout: string }) => (JSON.parse(ran.stdout) as { id: string }).id;
    const baseline = idOf(await replay('--json'));
    candidate = true;
    let better: string;
    let onlyA: string;
    try {
      better = idOf(await replay('--json'));
      onlyA = idOf(await replay('--only', ids.a, '--json'));
    } finally {
      candidate = false;
    }
    const compared = await run(['runs', 'compare', baseline, better, '--db', db, '--json']);
    expect(compared.exitCode, compared.stderr).toBe(0);
    // the run started last by its word: the same comparison as by its id
    const toLatest = await run(['runs', 'compare', baseline, 'latest', '--db', db, '--json']);
    const toOnlyA = await run(['runs', 'compare', baseline, onlyA, '--db', db, '--json']);
    expect(toLatest.exitCode, toLatest.stderr).toBe(0);
    expect(toLatest.stdout).toBe(toOnlyA.stdout);
    const report = JSON.parse(compared.stdout) as {
      turns: Record<string, number>;
      figures: { delta: Record<string, number | null> };
      regressedMost: string[];
      onlyBaseline: string[];
      perSession: { sessionId: string; turns: { turn: number; outcome: string; a?: string; b?: string }[] }[];
    };
    expect(report.turns).toEqual({ improved: 1, regressed: 2, same: 5, onlyBaseline: 0, onlyCandidate: 0 });
    const outcomes = (id: string) =>
      report.perSession.find((s) => s.sessionId === id)?.turns.map((t) => [t.turn, t.outcome, t.a, t.b]);
    expect(outcomes(ids.a)).toEqual([
      [1, 'same', 'exact', 'exact'],
      [2, 'same', 'exact', 'exact'],
      [3, 'regressed', 'exact', 'differs'],
      [4, 'regressed', 'none', 'none'],
    ]);
    expect(outcomes(ids.b)?.[1]).toEqual([2, 'improved', 'differs', 'exact']);
    expect(report.regressedMost).toEqual([ids.a]);
    expect(report.figures.delta).toMatchObject({ recall: 0, exactTurns: 0, divergedSessions: 0, misses: 0 });
    // For people, and the gate on regressions.
    const said = await run(['runs', 'compare', baseline, better, '--db', db, '--max-regressions', '1']);
    expect(said.exitCode).toBe(4);
    expect(said.stdout).toContain('turns       1 improved, 2 regressed, 5 the same');
    expect(said.stdout).toContain(
      `${ids.a.slice(0, 12)}  2 regressed, 0 improved: turn 3 exact → differs; turn 4 none → none (text 1.00 → 0.00)`,
    );
    expect(said.stdout).toContain('gate        --max-regressions 1: 2 turn(s) regressed, FAILED (exit 4)');
    expect(
      (await run(['runs', 'compare', baseline, better, '--db', db, '--max-regressions', '2'])).exitCode,
    ).toBe(0);
    // The comparison as reports: Markdown for the CI page, and HTML with an anchor per session and changed turn.
    const file = join(dir.path, 'compare');
    const summary = join(dir.path, 'compare-summary.md');
    const reported = await run(
      ['runs', 'compare', baseline, better, '--db', db, '--max-regressions', '1', '--report', file],
      { env: { GITHUB_STEP_SUMMARY: summary } },
    );
    expect(reported.exitCode).toBe(4);
    const markdown = readFileSync(`${file}.md`, 'utf8');
    expect(markdown).toContain(
      `## replay-history: ${better} against ${baseline} — gate failed: 1 turn(s) improved, 2 regressed`,
    );
    expect(markdown).toContain('❌ `--max-regressions 1`: 2 turn(s) regressed');
    expect(markdown).toContain(
      `| \`${ids.a.slice(0, 12)}\` | 2 | 0 | turn 3 exact → differs; turn 4 none → none (text 1.00 → 0.00) |`,
    );
    expect(readFileSync(summary, 'utf8')).toBe(`${markdown}\n`);
    const html = readFileSync(`${file}.html`, 'utf8');
    expect(html).toContain(`<li id="session-${ids.a}-turn-3" class="regressed">`);
    expect(html).toContain(`<li id="session-${ids.b}-turn-2" class="improved">`);
    // A run over A alone: B is listed, not dropped.
    const partial = JSON.parse(
      (await run(['runs', 'compare', baseline, onlyA, '--db', db, '--json'])).stdout,
    ) as {
      onlyBaseline: string[];
      onlyCandidate: string[];
    };
    expect(partial.onlyBaseline).toEqual([ids.b]);
    expect(partial.onlyCandidate).toEqual([]);
  });
});

describe('replay --report', () => {
  it('writes a Markdown summary for CI pages, the failed gates first, and appends it to $GITHUB_STEP_SUMMARY', async () => {
    const summary = join(dir.path, 'step-summary.md');
    writeFileSync(summary, '# earlier step\n');
    const out = join(dir.path, 'reported.jsonl');
    const ran = await run(
      [
        'replay',
        '--all',
        '--model',
        'openai:scripted',
        '--base-url',
        server.baseURL,
        '--db',
        db,
        '--out',
        out,
        '--min-recall',
        '0.9',
        '--max-misses',
        '0',
        '--report',
        join(dir.path, 'report'),
        '--json',
      ],
      { env: { GITHUB_STEP_SUMMARY: summary } },
    );
    expect(ran.exitCode).toBe(4);
    const runId = (JSON.parse(ran.stdout) as { id: string }).id;
    const markdown = readFileSync(join(dir.path, 'report.md'), 'utf8');
    expect(readFileSync(summary, 'utf8')).toBe(`# earlier step\n${markdown}\n`);
    // Stable for the golden file: the run id, the temporary paths and the server's port are the test's.
    const stable = markdown
      .split(runId)
      .join('RUN_ID')
      .split(dir.path)
      .join('DIR')
      .split(server.baseURL)
      .join('SERVER');
    const golden = join(root, 'test/fixtures/reports/gates.md');
    if (process.env.UPDATE_GOLDEN) writeFileSync(golden, stable);
    expect(stable).toBe(readFileSync(golden, 'utf8'));
  });
});

describe('replay --report: session status', () => {
  it('a forced run marks every session whose turns were all asked as done (it used to leave them pending)', async () => {
    const file = join(dir.path, 'status-report');
    const ran = await run([
      'replay',
      '--all',
      '--model',
      'openai:scripted',
      '--base-url',
      server.baseURL,
      '--db',
      db,
      '--out',
      join(dir.path, 'status.jsonl'),
      '--report',
      file,
    ]);
    expect(ran.exitCode).toBe(0);
    const table =
      /<table id="sessions">(.*?)<\/table>/s.exec(readFileSync(`${file}.html`, 'utf8'))?.[1] ?? '';
    const statuses = [...table.matchAll(/<tr><td><a [^>]*>[^<]*<\/a><\/td><td>([^<]*)<\/td>/g)].map(
      (m) => m[1],
    );
    expect(statuses).toEqual(['done', 'done']);
  });
});

/** Debian's chromium (.ci/run installs it where it can); without one the browser test cannot run. */
const browser = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

describe('replay --report: the HTML page', () => {
  it.runIf(browser)(
    'opens in a real browser with no network and no console error: figures, plot, a session’s two answers diffed',
    async () => {
      const out = join(dir.path, 'html.jsonl');
      const file = join(dir.path, 'html-report');
      const ran = await run([
        'replay',
        '--all',
        '--model',
        'openai:scripted',
        '--base-url',
        server.baseURL,
        '--db',
        db,
        '--out',
        out,
        '--min-recall',
        '0.9',
        '--report',
        file,
      ]);
      expect(ran.exitCode).toBe(4);
      expect(ran.stderr).toContain(`report: ${file}.html`);
      const launched = await chromium.launch({ executablePath: browser as string, args: ['--no-sandbox'] });
      try {
        const page = await launched.newPage();
        const problems: string[] = [];
        const requests: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });
        page.on('pageerror', (error) => problems.push(String(error)));
        page.on('request', (request) => requests.push(request.url()));
        await page.goto(`file://${file}.html`);
        expect(await page.textContent('#verdict')).toBe('1 gate(s) failed');
        expect(await page.textContent('#gates')).toContain('recall 83.3% (5 of 6 recorded calls made)');
        expect(await page.textContent('#figures')).toContain('83.3%');
        // One session diverged, at turn 2: one bar.
        expect(await page.locator('#plot rect.bar').count()).toBe(1);
        expect(await page.getAttribute('#plot rect.bar', 'data-turn')).toBe('2');
        // Open session B from the table: its turn 2 shows both answers, the differing call marked on each side.
        await page.click(`#link-${ids.b}`);
        await page.waitForSelector('#shown');
        expect(page.url()).toContain(`#session-${ids.b}`);
        const turn = page.locator(`[id="session-${ids.b}-turn-2"]`);
        expect(await turn.textContent()).toContain('differs');
        expect(await turn.locator('del').first().textContent()).toContain('file-2.txt');
        expect(await turn.locator('ins').first().textContent()).toContain('elsewhere.txt');
        // A turn that matched shows no difference.
        expect(
          await page
            .locator(`[id="session-${ids.b}-turn-1"] ins, [id="session-${ids.b}-turn-1"] del`)
            .count(),
        ).toBe(0);
        mkdirSync(join(root, 'test-artifacts'), { recursive: true });
        await page.screenshot({ path: join(root, 'test-artifacts', 'report.png'), fullPage: true });
        expect(problems).toEqual([]);
        expect(requests.every((url) => url === `file://${file}.html`)).toBe(true);
      } finally {
        await launched.close();
      }
    },
  );
});
