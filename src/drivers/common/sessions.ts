// What every driver does around its sessions: replays them `concurrency` at a time (each its own agent
// process and servers), skipping those a resumed run already finished, and stopping at the first error that
// is not a session's own (a session's failure is recorded by the driver and the run goes on).
import { existsSync, statSync } from 'node:fs';
import { requestDigest } from '../../replay/engine.js';
import type { CallMatch } from '../../replay/match.js';
import type { Pair, PairsWriter } from '../../replay/pairs.js';
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

/** What a driver reports on, beside the store: a finished session, a turn asked, something to tell the user. */
export interface SessionReports extends SessionRun {
  onTurn?: (event: { sessionId: string; turn: number; ok: boolean }) => void;
  onSession?: (event: { sessionId: string; status: 'done' | 'diverged' | 'failed'; note?: string }) => void;
  onNote?: (text: string) => void;
}

/**
 * A session ended before its agent ran: `failed` (said to the user, with why) or `done` (nothing to replay on
 * its own, a sub-agent replayed within its parent).
 */
export function endUnreplayed(
  run: SessionReports,
  sessionId: string,
  why: string,
  status: 'done' | 'failed' = 'failed',
): void {
  if (status === 'failed') run.onNote?.(`${sessionId.slice(0, 12)}: ${why}`);
  run.runs.setSessionStatus(run.runId, sessionId, status);
  run.onSession?.({ sessionId, status, note: why });
}

/** Whether the agent can run in `workspace` (the recorded cwd, or --workspace): a directory on this machine. */
export function usableWorkspace(workspace: string | undefined): workspace is string {
  return workspace !== undefined && existsSync(workspace) && statSync(workspace).isDirectory();
}

/** Why a session whose workspace is not usable is not replayed. */
export function unusableWorkspace(workspace: string | undefined): string {
  return `not replayed: ${workspace ? `its workspace ${workspace} is not on this machine` : 'no recorded cwd'} (pass --workspace DIR)`;
}

/** A turn the agent never got an answer for: stored failed with its cause, counted, and said. */
export function failTurn(
  run: SessionReports,
  sessionId: string,
  turn: number,
  callsOriginal: number,
  why: string,
): void {
  run.runs.saveTurn(run.runId, {
    sessionId,
    turn,
    status: 'failed',
    requestDigest: '',
    callsPredicted: 0,
    callsOriginal,
    callsMatched: 0,
    error: why,
  });
  run.onTurn?.({ sessionId, turn, ok: false });
  run.onNote?.(`${sessionId.slice(0, 12)}: turn ${turn} failed: ${why}`);
}

/** The JSON lines of an agent's `--format json` / `stream-json` output; other lines are left out. */
export function jsonEvents(stdout: string): { type?: string; [key: string]: unknown }[] {
  const events: { type?: string; [key: string]: unknown }[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as { type?: string });
    } catch {
      // Not an event line.
    }
  }
  return events;
}

/** What the model had been shown when it asked: results elided and cut, bytes not sent, elided results asked again. */
export interface ShownFigures {
  elided: number;
  cut: number;
  bytesSaved: number;
  reasks?: number;
}

/**
 * One agent step answered: its pair written, its turn stored with how its calls compare with the original's
 * and what the model had been shown (as the builtin driver counts it), and reported.
 */
export function recordStep(
  run: SessionReports & { writer: PairsWriter; model: string },
  pair: Pair,
  match: CallMatch,
  shown: ShownFigures,
): void {
  run.writer.write(pair);
  run.runs.saveTurn(run.runId, {
    sessionId: pair.session,
    turn: pair.turn,
    status: 'ok',
    requestDigest: requestDigest(run.model, pair.messages, pair.tools),
    response: pair.completion,
    match: match.match,
    callsPredicted: match.predicted,
    callsOriginal: match.original,
    callsMatched: match.matched,
    promptTokens: pair.usage.prompt_tokens,
    completionTokens: pair.usage.completion_tokens,
    latencyMs: pair.latency_ms,
    resultsElided: shown.elided,
    resultsCut: shown.cut,
    bytesSaved: shown.bytesSaved,
    ...(shown.reasks !== undefined ? { reasks: shown.reasks } : {}),
  });
  run.onTurn?.({ sessionId: pair.session, turn: pair.turn, ok: true });
}

/** Why the next step may not be sent, if it may not: --on-miss stop said so, or the budget is spent. */
export function stepRefusal(stopped: string | undefined, steps: number, budget: number): string | undefined {
  if (stopped) return stopped;
  if (steps >= budget)
    return `replay-history: the session's budget of ${budget} model calls (--max-turns) is spent`;
  return undefined;
}
