#!/usr/bin/env node
// HTML report benchmark: does the report of a large run stay usable in a browser? 1,000 generated sessions
// (bench/replay/sessions.mjs) are ingested and replayed with `--model recorded` (forced, so every turn has an
// original and a replayed answer), then `runs check RUN --min-recall 1 --report` writes the Markdown and HTML.
// Measured: the time to write the reports, the HTML's size, and in headless chromium (Debian's, as the test
// uses) the time until the page is loaded and its tables drawn, and until an opened session's turns are drawn —
// against the floor of the same browser opening an empty page in the same run. Prints figures only.
//
//   npm run bench:report                    (builds first; 1,000 sessions, median of 3 page loads)
//   node bench/report/run.mjs [--sessions 1000] [--runs 3] [--json]

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { median, table } from '../children.mjs';
import { buildSessions } from '../replay/sessions.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const cli = join(repo, 'dist', 'cli', 'main.js');
const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const count = Number(values.sessions);
const runs = Number(values.runs);
const say = (text) => process.stderr.write(`${text}\n`);
const browserPath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
if (!browserPath) {
  say('no chromium at /usr/bin/chromium: apt-get install chromium');
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), 'bench-report-'));
const node = (args) => {
  const started = performance.now();
  const ran = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { ...ran, seconds: (performance.now() - started) / 1000 };
};
try {
  say(`generating ${count} sessions …`);
  buildSessions({ dir: join(work, 'sessions'), counts: [count] });
  const db = join(work, 'store.db');
  if (node(['ingest', join(work, 'sessions', 'part-0'), '--db', db]).status !== 0)
    throw new Error('ingest failed');
  say('replaying them (recorded) …');
  const replayed = node([
    'replay',
    '--all',
    '--db',
    db,
    '--out',
    join(work, 'pairs.jsonl'),
    '--json',
    '--quiet',
  ]);
  if (replayed.status !== 0) throw new Error(`replay failed: ${replayed.stderr}`);
  const run = JSON.parse(replayed.stdout);
  const report = join(work, 'report');
  const written = node(['runs', 'check', run.id, '--db', db, '--min-recall', '1', '--report', report]);
  if (written.status !== 0) throw new Error(`runs check failed: ${written.stderr}`);
  const html = `${report}.html`;
  const blank = join(work, 'blank.html');
  writeFileSync(blank, '<!doctype html><title>blank</title>');
  const browser = await chromium.launch({ executablePath: browserPath, args: ['--no-sandbox'] });
  const open = [];
  const session = [];
  const floor = [];
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage();
      let started = performance.now();
      await page.goto(`file://${blank}`);
      floor.push((performance.now() - started) / 1000);
      started = performance.now();
      await page.goto(`file://${html}`, { waitUntil: 'load' });
      await page.waitForSelector('#sessions tr:last-child');
      open.push((performance.now() - started) / 1000);
      // The session with the most turns: the heaviest to draw.
      const id = await page.evaluate(() => {
        const data = JSON.parse(document.getElementById('data').textContent);
        return data.sessions.reduce((a, b) => (b.turns.length > a.turns.length ? b : a)).figures.sessionId;
      });
      started = performance.now();
      await page.evaluate((target) => {
        location.hash = `session-${target}`;
      }, id);
      await page.waitForSelector('#shown');
      session.push((performance.now() - started) / 1000);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const figures = {
    machine: `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${platform()} ${release()}, node ${process.version}`,
    sessions: run.sessions,
    turns: run.turnsDone,
    writeSeconds: written.seconds,
    htmlMiB: statSync(html).size / 2 ** 20,
    markdownKiB: statSync(`${report}.md`).size / 1024,
    blankPageSeconds: median(floor),
    openSeconds: median(open),
    openSessionSeconds: median(session),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  else {
    const s = (x) => x.toFixed(2);
    process.stdout.write(
      `replay-history HTML report benchmark — ${figures.machine}, median of ${runs} page loads\n` +
        `${figures.sessions} sessions, ${figures.turns} turns (--model recorded, forced)\n\n` +
        `${table([
          ['', ''],
          ['runs check --report, wall (s)', s(figures.writeSeconds)],
          ['HTML size (MiB)', s(figures.htmlMiB)],
          ['Markdown size (KiB)', s(figures.markdownKiB)],
          ['chromium: a blank page, loaded (s)', s(figures.blankPageSeconds)],
          ['chromium: the report, loaded and drawn (s)', s(figures.openSeconds)],
          ['chromium: its longest session opened (s)', s(figures.openSessionSeconds)],
        ])}\n`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
