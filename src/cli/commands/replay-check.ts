import { existsSync, statSync } from 'node:fs';
import type { RunStore } from '../../store/runs.js';
import type { Checker, Report } from '../../verify/check.js';
import type { Change } from '../../verify/diff.js';
import { comparePaths } from '../../verify/entry.js';
import type { CopyOnWrite, ViewStatus } from '../../verify/overlay.js';
import { formatReport } from '../../verify/report.js';
import { progressBar, warn } from '../output.js';

/** The side-effect check around a replay: what is watched, and why some recorded cwds are not. */
export interface ReplayCheck {
  checker?: Checker;
  roots: string[];
  /** Recorded cwds that are not on this machine. */
  absent: string[];
  /** Recorded cwds too broad to walk (/, the home or temp dir, or above one), each with what it is. */
  skipped: { cwd: string; reason: string }[];
  /** The copy-on-write view the agent runs against (the agent driver, where the machine allows it). */
  view?: CopyOnWrite;
  /** What the report says of the view: how the agent saw the checked directories, or why as they are. */
  viewStatus?: ViewStatus;
  /**
   * Checked directories the agent could not write (it saw them copy-on-write, or read-only under --sandbox):
   * a change in the real tree there is another process's.
   */
  sheltered: string[];
  /** Why the report could not be stored with the run (a full disk): it is still said, and then this is raised. */
  unsaved?: unknown;
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/**
 * Starts the checker over the --watch directories and every recorded cwd that exists here, leaving out the
 * store (with its -wal, -shm and -journal companions) and the pairs file by exact path. A recorded cwd that is
 * /, the home or temp dir (or above one) is not walked: the replay would hash everything there and report what
 * every other program writes; --watch checks it anyway. With an agent (`agent`), the checked directories are
 * made copy-on-write for it where the machine allows (not with --sandbox: they are read-only to it then).
 * Nothing to watch is said, not hidden.
 */
export async function startCheck(options: {
  runId: string;
  dbFile: string;
  outFile: string;
  cwds: (string | null)[];
  watch: string[];
  exclude: string[];
  /** The run spawns an agent (the opencode driver); `sandbox`: under --sandbox. */
  agent?: { sandbox: boolean };
}): Promise<ReplayCheck> {
  const absent = new Set<string>();
  const present: string[] = [];
  for (const cwd of new Set(options.cwds)) {
    if (!cwd) continue;
    if (isDirectory(cwd)) present.push(cwd);
    else absent.add(cwd);
  }
  // The checker's modules (the walker, its worker pool, the watcher) are loaded only when there is something to
  // check: a replay of sessions recorded elsewhere starts without them.
  if (options.watch.length === 0 && present.length === 0)
    return { roots: [], absent: [...absent], skipped: [], sheltered: [] };
  const [{ Checker, canonicalRoots }, { CopyOnWrite }, { tooBroad }] = await Promise.all([
    import('../../verify/check.js'),
    import('../../verify/overlay.js'),
    import('../../verify/scope.js'),
  ]);
  const skipped: ReplayCheck['skipped'] = [];
  const candidates = [...options.watch];
  for (const cwd of present) {
    const broad = tooBroad(cwd);
    if (broad) skipped.push({ cwd, reason: broad });
    else candidates.push(cwd);
  }
  for (const { cwd, reason } of skipped)
    warn(
      `not checking ${cwd}, where a session was recorded: it is ${reason}, and walking it would hash every file there and report what other programs write (--watch ${cwd} checks it anyway)`,
    );
  const roots = canonicalRoots(candidates);
  const check: ReplayCheck = { roots, absent: [...absent], skipped, sheltered: [] };
  if (roots.length === 0) return check;
  if (options.agent?.sandbox) {
    check.viewStatus = {
      method: 'none',
      reason: '--sandbox: the checked directories are read-only to the agent',
      overlaid: [],
      notOverlaid: [],
      sessions: 0,
      probeMs: 0,
      teardownMs: 0,
    };
    check.sheltered = roots;
  } else if (options.agent) {
    const view = CopyOnWrite.open(roots);
    if (view instanceof CopyOnWrite) {
      check.view = view;
      check.sheltered = view.status().overlaid;
    } else check.viewStatus = view;
  }
  const bar = progressBar('check');
  try {
    check.checker = await Checker.start({
      roots,
      exclude: [
        ...options.exclude,
        ...['', '-wal', '-shm', '-journal'].map((suffix) => `${options.dbFile}${suffix}`),
        options.outFile,
        ...(check.view ? [check.view.base] : []),
      ],
      progress: (_, entries) => bar.update(entries, entries, 'entries before the run'),
    });
    return check;
  } catch (error) {
    check.view?.close();
    throw error;
  } finally {
    bar.end();
  }
}

const under = (path: string, roots: readonly string[]) =>
  roots.some((root) => path === root || path.startsWith(`${root}/`));

/**
 * The verdict: the real tree's changes where the agent could have made them, plus what the view's upper layers
 * record it wrote; the real tree's changes where it could not are another process's.
 */
function judge(check: ReplayCheck, report: Report): Report {
  const others: Change[] = [];
  const own: Change[] = [];
  for (const change of report.changes) {
    const sheltered =
      under(change.path, check.sheltered) && (!change.from || under(change.from, check.sheltered));
    (sheltered ? others : own).push(change);
  }
  const gaps = [...report.gaps];
  if (check.view) {
    const written = check.view.read();
    own.push(...written.changes);
    gaps.push(...written.gaps);
  }
  own.sort((a, b) => comparePaths(a.path, b.path));
  return { ...report, clean: own.length === 0, changes: own, others, gaps };
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
    report = judge(check, await check.checker.finish());
  } finally {
    bar.end();
    if (check.view) {
      check.view.close();
      check.viewStatus = check.view.status();
    }
  }
  // The verdict is said even when the store cannot take it (its disk is full): side effects are never lost.
  try {
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
        others: report.others,
        ...(check.viewStatus ? { copyOnWrite: check.viewStatus } : {}),
        ...(check.skipped.length > 0 ? { skippedCwds: check.skipped } : {}),
      },
      changes: report.changes,
    });
  } catch (error) {
    check.unsaved = error;
  }
  return report;
}

/** How the agent saw the checked directories, in one line. */
function viewLine(status: ViewStatus): string {
  if (status.method === 'none')
    return `copy-on-write view not available: ${status.reason}, checking the real workspace`;
  const partly =
    status.notOverlaid.length > 0
      ? `; seen as they are: ${status.notOverlaid.map((root) => `${root.path} (${root.reason})`).join(', ')}`
      : '';
  return `copy-on-write view: ${status.method} over ${status.overlaid.join(', ')} (${status.sessions} session${status.sessions === 1 ? '' : 's'})${partly}`;
}

export function formatCheck(check: ReplayCheck, report: Report | undefined): string {
  const notes: string[] = [];
  if (check.absent.length > 0)
    notes.push(
      `${check.absent.length} recorded cwd(s) not on this machine, not checked: ${check.absent.slice(0, 3).join(', ')}${check.absent.length > 3 ? ', …' : ''}`,
    );
  if (check.skipped.length > 0)
    notes.push(
      `recorded cwd(s) too broad to walk, not checked (--watch DIR checks one anyway): ${check.skipped.map((s) => `${s.cwd} (${s.reason})`).join(', ')}`,
    );
  if (check.viewStatus && report) notes.push(viewLine(check.viewStatus));
  const tail = notes.map((note) => `\n            ${note}`).join('');
  if (!report) return `side effects not checked: no directory to watch (add --watch DIR)${tail}`;
  const lines = formatReport(report).split('\n');
  return `side effects ${lines[0]}${lines.length > 1 ? `\n${lines.slice(1).join('\n')}` : ''}${tail}`;
}

export function checkJson(check: ReplayCheck, report: Report | undefined) {
  return {
    checked: report !== undefined,
    roots: check.roots,
    absentCwds: check.absent,
    skippedCwds: check.skipped,
    changes: report?.changes ?? [],
    otherChanges: report?.others ?? [],
    copyOnWrite: check.viewStatus ?? null,
    gaps: report?.gaps ?? [],
    manifest: report?.manifest ?? null,
    watcher: report?.watcher ?? null,
  };
}
