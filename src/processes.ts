// Whether a process that wrote something down is still there: a replay run's owner, a checker's temporary files.
// A pid alone can be taken by another process once its own has ended; where the kernel says when a process started
// (Linux: the boot and the start time in /proc), that is kept with the pid and compared too.
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** Whether a process exists (EPERM: it does, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process as stored beside what it is doing: its pid, its machine, and when it started where that is known. */
export interface Owner {
  pid: number;
  host: string;
  /** The boot and the start time of the process (Linux), so that a later process with the same pid is not it. */
  since?: string;
}

/** When the process started, as the kernel says it: the boot's id and its start in clock ticks; else undefined. */
function startOf(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may itself hold spaces and parentheses: starttime is the 22nd field.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return boot && start ? `${boot}:${start}` : undefined;
  } catch {
    return undefined;
  }
}

/** This process, as an owner. */
export function thisProcess(): Owner {
  const since = startOf(process.pid);
  return { pid: process.pid, host: hostname(), ...(since ? { since } : {}) };
}

/**
 * alive: the owner is running on this machine; gone: it is not (no such process, or another one that started
 * later has its pid); elsewhere: it ran on another machine, which cannot be asked; unknown: no owner was stored.
 */
export type OwnerState = 'alive' | 'gone' | 'elsewhere' | 'unknown';

export function ownerState(owner: Owner | undefined): OwnerState {
  if (!owner) return 'unknown';
  if (owner.host !== hostname()) return 'elsewhere';
  if (!alive(owner.pid)) return 'gone';
  if (owner.since === undefined) return 'alive';
  const since = startOf(owner.pid);
  return since === undefined || since === owner.since ? 'alive' : 'gone';
}

/** Whether the owner is another process, running now on this machine: what a second writer must wait for. */
export function anotherAlive(owner: Owner | undefined): owner is Owner {
  return owner !== undefined && owner.pid !== process.pid && ownerState(owner) === 'alive';
}

/** An owner as stored (JSON), or undefined for none or for what is not one. */
export function parseOwner(text: string | null | undefined): Owner | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<Owner>;
    if (typeof value.pid !== 'number' || typeof value.host !== 'string') return undefined;
    return {
      pid: value.pid,
      host: value.host,
      ...(typeof value.since === 'string' ? { since: value.since } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * The entries of `folder` that processes killed without a word (SIGKILL, a crash) left: those whose name
 * `pattern` matches with, as its first group, the pid of a process no longer running here. None where the folder
 * cannot be listed.
 */
export function leftByGone(folder: string, pattern: RegExp): string[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  return names.filter((name) => {
    const pid = Number(pattern.exec(name)?.[1]);
    return pid > 0 && !alive(pid);
  });
}
