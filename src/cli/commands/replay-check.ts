import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import type { RunStore } from '../../store/runs.js';
import { Checker, canonicalRoots, type Report } from '../../verify/check.js';
import { formatReport } from '../../verify/report.js';
import { progressBar, warn } from '../output.js';

/** The side-effect check around a replay: what is watched, and why some recorded cwds are not. */
export interface ReplayCheck {
  checker?: Checker;
  roots: string[];
  /** Recorded cwds that are not on this machine. */
  absent: string[];
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/**
 * Starts the checker over the --watch directories and every recorded cwd that exists here, leaving out the
 * store (with its -wal, -shm and -journal companions) and the pairs file by exact path. Nothing to watch is
 * said, not hidden.
 */
export async function startCheck(options: {
  runId: string;
  dbFile: string;
  outFile: string;
  cwds: (string | null)[];
  watch: string[];
  exclude: string[];
}): Promise<ReplayCheck> {
  const absent = new Set<string>();
  const candidates = [...options.watch];
  for (const cwd of new Set(options.cwds)) {
    if (!cwd) continue;
    if (!isDirectory(cwd)) absent.add(cwd);
    else if (cwd === '/')
      warn('a session was recorded in /: not checked (add --watch for what it could touch)');
    else candidates.push(cwd);
  }
  const roots = canonicalRoots(candidates);
  if (roots.length === 0) return { roots, absent: [...absent] };
  if (roots.includes(homedir()))
    warn(
      `checking all of ${homedir()} (a session was recorded there): the first check hashes every file in it`,
    );
  const bar = progressBar('check');
  try {
    const checker = await Checker.start({
      roots,
      exclude: [
        ...options.exclude,
        ...['', '-wal', '-shm', '-journal'].map((suffix) => `${options.dbFile}${suffix}`),
        options.outFile,
      ],
      progress: (_, entries) => bar.update(entries, entries, 'entries before the run'),
    });
    return { checker, roots, absent: [...absent] };
  } finally {
    bar.end();
  }
}

/** Finishes the check and stores it with the run; undefined when nothing was watched. */
export async function finishCheck(
  check: ReplayCheck,
  runs: RunStore,
  runId: string,
): Promise<Report | undefined> {
  if (!check.checker) return undefined;
  const bar = progressBar('check');
  let report: Report;
  try {
    report = await check.checker.finish();
  } finally {
    bar.end();
  }
  runs.saveCheck(runId, {
    startedAt: report.startedAt,
    finishedAt: report.finishedAt,
    roots: report.roots,
    entries: report.manifest.after,
    summary: {
      manifest: report.manifest,
      watcher: report.watcher,
      gaps: report.gaps,
      excluded: report.excluded,
    },
    changes: report.changes,
  });
  return report;
}

export function formatCheck(check: ReplayCheck, report: Report | undefined): string {
  const absent =
    check.absent.length > 0
      ? `\n            ${check.absent.length} recorded cwd(s) not on this machine, not checked: ${check.absent.slice(0, 3).join(', ')}${check.absent.length > 3 ? ', …' : ''}`
      : '';
  if (!report) return `side effects not checked: no directory to watch (add --watch DIR)${absent}`;
  const lines = formatReport(report).split('\n');
  return `side effects ${lines[0]}${lines.length > 1 ? `\n${lines.slice(1).join('\n')}` : ''}${absent}`;
}

export function checkJson(check: ReplayCheck, report: Report | undefined) {
  return {
    checked: report !== undefined,
    roots: check.roots,
    absentCwds: check.absent,
    changes: report?.changes ?? [],
    gaps: report?.gaps ?? [],
    manifest: report?.manifest ?? null,
    watcher: report?.watcher ?? null,
  };
}
