// What the benchmarks need to run and measure child processes (and the agents below them), and to handle the stores they
// leave behind.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Runs `node <args>` in the repository; returns wall time, exit code, output and what the child wrote to
 * `usageFile` (bench/ingest/measure.mjs writes its peak RSS and CPU time there).
 */
export function runNode(args, usageFile, env = {}) {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: repo,
      env: { ...process.env, BENCH_RSS_FILE: usageFile, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout = [];
    const stderr = [];
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', fail);
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      let usage = {};
      if (existsSync(usageFile)) {
        usage = JSON.parse(readFileSync(usageFile, 'utf8'));
        rmSync(usageFile);
      }
      done({
        seconds,
        code,
        signal,
        usage,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}

/** Rows as aligned columns: the first left-aligned, the others right-aligned (figures). */
export function table(rows) {
  const widths = [];
  for (const r of rows) {
    for (const [i, cell] of r.entries()) widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
  }
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export const cpuSeconds = (usage) => ((usage.userCPUTime ?? 0) + (usage.systemCPUTime ?? 0)) / 1e6;

export function removeDb(db) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
}

export function dbBytes(db) {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(db + suffix)) total += statSync(db + suffix).size;
  return total;
}

/** Peak RSS (KiB) of every descendant of `root` seen so far, by pid, with its command name (/proc, every `interval` ms). */
export function sampler(root, interval = 20) {
  const seen = new Map();
  const tick = () => {
    const parents = new Map();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        parents.set(Number(name), {
          ppid: Number(fields[1]),
          comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        });
      } catch {
        // Gone meanwhile.
      }
    }
    for (const [pid, { comm }] of parents) {
      let at = parents.get(pid)?.ppid;
      while (at !== undefined && at !== root && at > 1) at = parents.get(at)?.ppid;
      if (at !== root) continue;
      try {
        const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
        if (hwm) seen.set(pid, { comm, kib: Math.max(Number(hwm), seen.get(pid)?.kib ?? 0) });
      } catch {
        // Gone meanwhile.
      }
    }
  };
  const timer = setInterval(tick, interval);
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}

/** The newest child of this process (the measuring node just spawned). */
export async function waitForChild() {
  for (let tries = 0; tries < 100; tries++) {
    const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/);
    const last = Number(children.filter(Boolean).at(-1));
    if (last > 0) return last;
    await new Promise((done) => setTimeout(done, 5));
  }
  return undefined;
}
