// What every driver does around its sessions: replays them `concurrency` at a time (each its own agent
// process and servers), skipping those a resumed run already finished, and stopping at the first error that
// is not a session's own (a session's failure is recorded by the driver and the run goes on).
import type { RunStore } from '../../store/runs.js';

export interface SessionRun {
  runId: string;
  runs: RunStore;
  sessionIds: readonly string[];
  concurrency: number;
}

export async function forEachSession(run: SessionRun, replay: (id: string) => Promise<void>): Promise<void> {
  const queue = [...run.sessionIds];
  let fatal: unknown;
  const worker = async (): Promise<void> => {
    for (let id = queue.shift(); id !== undefined && fatal === undefined; id = queue.shift()) {
      const status = run.runs.sessionStatus(run.runId, id);
      if (status && status !== 'pending' && status !== 'failed') continue;
      try {
        await replay(id);
      } catch (error) {
        fatal ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, run.concurrency) }, worker));
  if (fatal !== undefined) throw fatal;
}
