// The processes a test's child started, from /proc: to prove an agent was stopped with the replay that ran it.
import { readdirSync, readFileSync } from 'node:fs';

/** The pids of the processes below `root` whose name has `name` in it. */
export function descendants(root: number, name: string): number[] {
  const parents = new Map<number, { ppid: number; comm: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), {
        ppid: Number(fields[1]),
        comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      });
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  for (const [pid, { comm }] of parents) {
    let at = parents.get(pid)?.ppid;
    while (at !== undefined && at !== root && at > 1) at = parents.get(at)?.ppid;
    if (at === root && comm.includes(name)) found.push(pid);
  }
  return found;
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
