// opencode's glob and grep tools run ripgrep; with no `rg` on PATH opencode tries to download one from GitHub,
// which this machine and CI cannot reach (the tools then fail with "ripgrep execution failed"). This writes a
// small stand-in `rg` that answers the two invocations opencode 1.18.33 makes, in ripgrep's own output formats,
// so the recorded glob and grep calls get results, the same on every machine.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The two invocations (read from the 1.18.33 binary):
 *   rg --no-config --files [--hidden] [--follow] --glob=PATTERN --glob=!**\/.git/** .
 *   rg --no-config --json --hidden --no-messages [--glob=INCLUDE] --glob=!**\/.git/** -- PATTERN PATH
 * Exit codes as ripgrep's: 0 found, 1 nothing found, 2 error.
 */
const script = String.raw`#!/usr/bin/env node
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative, basename } = require('node:path');

const args = process.argv.slice(2);
const globs = [];
let files = false, json = false, hidden = false, rest = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--') { rest = args.slice(i + 1); break; }
  if (arg === '--files') files = true;
  else if (arg === '--json') json = true;
  else if (arg === '--hidden') hidden = true;
  else if (arg.startsWith('--glob=')) globs.push(arg.slice(7));
  else if (arg.startsWith('-')) continue;
  else rest.push(arg);
}

function globRegex(glob) {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') { i++; out += '(?:.*/)?'; } else out += '.*';
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') out += '(?:';
    else if (c === '}') out += ')';
    else if (c === ',') out += '|';
    else out += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp('^' + out + '$');
}
const include = globs.filter((g) => !g.startsWith('!')).map((g) => ({ re: globRegex(g), base: !g.includes('/') }));
const exclude = globs.filter((g) => g.startsWith('!')).map((g) => ({ re: globRegex(g.slice(1)), base: !g.slice(1).includes('/') }));
const hit = (rule, path) => rule.re.test(rule.base ? basename(path) : path);
const wanted = (path) => (include.length === 0 || include.some((r) => hit(r, path))) && !exclude.some((r) => hit(r, path));

function walk(root, dir, out) {
  for (const name of readdirSync(dir).sort()) {
    if (name === '.git' || (!hidden && name.startsWith('.'))) continue;
    const full = join(dir, name);
    const stat = statSync(full);
    if (stat.isDirectory()) walk(root, full, out);
    else if (stat.isFile()) {
      const rel = relative(root, full);
      if (wanted(rel)) out.push(rel);
    }
  }
  return out;
}

try {
  if (files) {
    const found = walk('.', '.', []);
    for (const path of found) process.stdout.write('./' + path + '\n');
    process.exit(found.length > 0 ? 0 : 1);
  }
  if (json) {
    const [pattern, target = '.'] = rest;
    let regex;
    try { regex = new RegExp(pattern, 'g'); } catch (error) {
      process.stderr.write('regex parse error:\n    ' + pattern + '\n');
      process.exit(2);
    }
    const stat = statSync(target);
    const paths = stat.isDirectory() ? walk(target, target, []).map((p) => join(target, p)) : [target];
    let matched = 0;
    for (const path of paths) {
      const text = readFileSync(path, 'utf8');
      let offset = 0;
      text.split(/(?<=\n)/).forEach((line, index) => {
        const submatches = [];
        for (const m of line.replace(/\n$/, '').matchAll(regex)) {
          if (m[0] === '') break;
          submatches.push({ match: { text: m[0] }, start: m.index, end: m.index + m[0].length });
        }
        if (submatches.length > 0) {
          matched++;
          const shown = path.startsWith('/') || path.startsWith('.') ? path : './' + path;
          process.stdout.write(JSON.stringify({ type: 'match', data: { path: { text: shown }, lines: { text: line },
            line_number: index + 1, absolute_offset: offset, submatches } }) + '\n');
        }
        offset += Buffer.byteLength(line);
      });
    }
    process.exit(matched > 0 ? 0 : 1);
  }
  process.stderr.write('rg stand-in: unsupported arguments: ' + args.join(' ') + '\n');
  process.exit(2);
} catch (error) {
  process.stderr.write(String(error && error.message) + '\n');
  process.exit(2);
}
`;

/** Writes the stand-in as `<dir>/rg` and returns the directory (to put first on PATH). */
export function installRipgrepStandIn(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'rg');
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return dir;
}
