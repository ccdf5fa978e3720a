#!/usr/bin/env node
// The redaction corpus benchmark: every secret and look-alike of test/fixtures/secrets/corpus.json placed in a
// Claude Code transcript of its own (place.mjs), ingested and exported per session by the built CLI, then
// scored: recall (secrets that do not survive the export, not even a 16-character piece of them) and
// look-alikes altered, per family, placement, context and source. Next to it, gitleaks run on the plain text of
// the same export made with --no-redact, where a gitleaks binary is given (--gitleaks) or on PATH. Figures only:
// the test that fails when recall drops is test/export/redact-corpus.test.ts.
//
//   npm run build && node bench/redact/run.mjs [--gitleaks 'node /path/to/gitleaks-cli/bin/gitleaks']
//   node bench/redact/run.mjs --in-process      # the Redactor of dist/ called directly: no ingest, no export
//   node bench/redact/run.mjs --misses 40 --json report.json
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { pct, score } from './measure.mjs';
import { altered, leaks, placeCorpus, redactCase, strings, transcript } from './place.mjs';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    gitleaks: { type: 'string' },
    'in-process': { type: 'boolean', default: false },
    dist: { type: 'string' },
    misses: { type: 'string', default: '25' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = values.dist ?? join(root, 'dist');
const corpus = JSON.parse(
  readFileSync(values.corpus ?? join(root, 'test/fixtures/secrets/corpus.json'), 'utf8'),
);
const cases = placeCorpus(corpus);
const byId = new Map(cases.map((c) => [c.id, c]));

/** The strings of each exported sample, by case id (the `[case id]` tag of its prompt). */
function exported(file) {
  const out = new Map();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const sample = JSON.parse(line);
    const all = [];
    for (const m of sample.messages) {
      if (typeof m.content === 'string') all.push(m.content);
      for (const call of m.tool_calls ?? []) all.push(...strings(JSON.parse(call.function.arguments)));
    }
    const id = /\[case (\w+)\]/.exec(all.join('\n'))?.[1];
    if (id) out.set(id, all);
  }
  return out;
}

const originals = new Map(
  cases.map((c) => [c.id, redactCase({ redactText: (t) => t, redactValue: (v) => v }, c).original]),
);
const judge = (c, redacted) =>
  c.type === 'secret'
    ? !leaks(c.forms, originals.get(c.id), redacted)
    : altered(c.forms[0], originals.get(c.id), redacted);

const results = {};
const t0 = performance.now();
let work;
if (values['in-process']) {
  const { Redactor } = await import(pathToFileURL(join(dist, 'export/redact.js')).href);
  const redactor = new Redactor();
  const outputs = new Map(cases.map((c) => [c.id, redactCase(redactor, c).redacted]));
  results['replay-history (in process)'] = score(cases, (c) => judge(c, outputs.get(c.id)));
} else {
  work = mkdtempSync(join(tmpdir(), 'bench-redact-'));
  const projects = join(work, 'projects', '-work-app');
  mkdirSync(projects, { recursive: true });
  for (const c of cases) writeFileSync(join(projects, `case-${c.id}.jsonl`), transcript(c));
  const cli = (args) =>
    execFileSync(process.execPath, [join(root, 'bin/replay-history.js'), ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 28,
    });
  const db = join(work, 'store.db');
  cli(['ingest', join(work, 'projects'), '--db', db]);
  const redactedFile = join(work, 'redacted.jsonl');
  const plainFile = join(work, 'plain.jsonl');
  const t1 = performance.now();
  cli(['export', '--db', db, '--format', 'openai', '--unit', 'session', '--out', redactedFile]);
  const exportSeconds = (performance.now() - t1) / 1000;
  cli(['export', '--db', db, '--format', 'openai', '--unit', 'session', '--no-redact', '--out', plainFile]);
  const redacted = exported(redactedFile);
  results['replay-history `export` (default redaction)'] = score(cases, (c) =>
    judge(c, redacted.get(c.id) ?? []),
  );
  results['replay-history `export` (default redaction)'].seconds = exportSeconds;

  // gitleaks on the plain text of the --no-redact export: one file per session, its findings' secrets replaced
  const gitleaks =
    values.gitleaks ?? (spawnSync('gitleaks', ['version']).status === 0 ? 'gitleaks' : undefined);
  if (gitleaks) {
    const plain = exported(plainFile);
    const texts = join(work, 'texts');
    mkdirSync(texts);
    for (const [id, all] of plain) writeFileSync(join(texts, `${id}.txt`), all.join('\n'));
    const report = join(work, 'gitleaks.json');
    const [cmd, ...pre] = gitleaks.split(' ');
    const ran = spawnSync(
      cmd,
      [...pre, 'dir', texts, '--no-banner', '--exit-code', '0', '-f', 'json', '-r', report],
      { encoding: 'utf8' },
    );
    if (ran.status !== 0) process.stderr.write(`gitleaks failed: ${ran.stderr}\n`);
    else {
      const version = spawnSync(cmd, [...pre, 'version'], { encoding: 'utf8' }).stdout.trim();
      const found = new Map();
      for (const f of JSON.parse(readFileSync(report, 'utf8'))) {
        const id = f.File.split('/')
          .at(-1)
          .replace(/\.txt$/, '');
        found.set(id, [...(found.get(id) ?? []), f.Secret]);
      }
      const redactWith = (id, all) =>
        all.map((s) =>
          (found.get(id) ?? []).reduce((t, secret) => (secret ? t.split(secret).join('[GITLEAKS]') : t), s),
        );
      results[`gitleaks ${version} (default config) on the plain text`] = score(cases, (c) =>
        judge(c, redactWith(c.id, plain.get(c.id) ?? [])),
      );
    }
  } else results.gitleaks = 'not run: no gitleaks binary (pass --gitleaks CMD)';
}
const wall = (performance.now() - t0) / 1000;

// ---------------------------------------------------------------------------------------------------------------
// Tables

const tools = Object.entries(results).filter(([, r]) => typeof r === 'object');
const out = [];
const print = (line = '') => out.push(line);
const md = (header, rows) => {
  print(`| ${header.join(' | ')} |`);
  print(`|${header.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`);
  for (const row of rows) print(`| ${row.join(' | ')} |`);
  print();
};
const toolNames = tools.map(([name]) => name);
print(
  `Corpus: ${cases.filter((c) => c.type === 'secret').length} secrets of ${new Set(cases.filter((c) => c.type === 'secret').map((c) => c.kind)).size} kinds, ${cases.filter((c) => c.type === 'lookalike').length} look-alikes (${wall.toFixed(1)} s)`,
);
print();
md(
  ['', 'recall', 'look-alikes altered'],
  tools.map(([name, r]) => [
    name,
    `**${pct(r.caught, r.secrets)}** (${r.caught}/${r.secrets})`,
    `**${pct(r.altered, r.lookalikes)}** (${r.altered}/${r.lookalikes})`,
  ]),
);
for (const key of ['family', 'placement', 'context', 'source']) {
  const keys = [...tools[0][1].by[key].keys()].sort();
  md(
    [key, ...toolNames.map((t) => t.replace(/ \(.*\)$/, '').replace(/ on the plain text$/, ''))],
    keys.map((k) => [
      k,
      ...tools.map(([, r]) => {
        const row = r.by[key].get(k);
        return row ? `${pct(row.hit, row.n)} (${row.hit}/${row.n})` : '–';
      }),
    ]),
  );
}
for (const [name, r] of Object.entries(results)) if (typeof r === 'string') print(`${name}: ${r}`);
const [firstName, first] = tools[0];
const limit = Number(values.misses);
if (limit > 0) {
  print(`Misses of ${firstName} (first ${limit} of ${first.misses.length}):`);
  for (const c of first.misses.slice(0, limit))
    print(
      `- ${c.id} ${c.source}/${c.kind} ${c.context} ${c.placement}: ${JSON.stringify(c.forms[0]).slice(0, 90)}`,
    );
  print(`Look-alikes altered by ${firstName}:`);
  for (const c of first.falsePositives.slice(0, limit))
    print(`- ${c.id} ${c.kind} ${c.placement}: ${JSON.stringify(c.forms[0]).slice(0, 90)}`);
}
process.stdout.write(`${out.join('\n')}\n`);
if (values.json) {
  const plain = Object.fromEntries(
    tools.map(([name, r]) => [
      name,
      {
        ...r,
        by: Object.fromEntries(Object.entries(r.by).map(([k, m]) => [k, Object.fromEntries(m)])),
        misses: r.misses.map((c) => c.id),
        falsePositives: r.falsePositives.map((c) => c.id),
      },
    ]),
  );
  writeFileSync(values.json, JSON.stringify(plain, null, 1));
}
if (work && !values.keep) rmSync(work, { recursive: true, force: true });
else if (work) process.stderr.write(`kept ${work}\n`);
void byId;
