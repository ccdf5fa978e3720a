import type { Statement } from 'better-sqlite3';
import { type Db, StoreError, statementCache } from './db.js';

export type RunStatus = 'running' | 'done' | 'failed' | 'interrupted';
export type Match = 'exact' | 'normalized' | 'differs' | 'none';
export type Driver = 'builtin' | 'opencode' | 'claude-code' | 'codex' | 'qwen' | 'gemini';

export interface RunRow {
  id: string;
  model: string;
  mode: 'forced' | 'free';
  /** Who ran the agent loop. */
  driver: Driver;
  options: string;
  out_file: string;
  status: RunStatus;
  error: string | null;
  started_at: string;
  finished_at: string | null;
  /** The process running it, as JSON (src/processes.ts `Owner`); null for runs made before it was kept. */
  owner: string | null;
}

export interface TurnRecord {
  sessionId: string;
  turn: number;
  status: 'ok' | 'failed';
  requestDigest: string;
  response?: unknown;
  match?: Match;
  callsPredicted: number;
  callsOriginal: number;
  callsMatched: number;
  promptTokens?: number;
  completionTokens?: number;
  latencyMs?: number;
  error?: string;
  /** --elide-repeats: results of the context shown as a marker, and the bytes that saved. */
  resultsElided?: number;
  bytesSaved?: number;
  /** --max-result-bytes: results of the context cut to the limit. */
  resultsCut?: number;
  /** Free mode: calls asking again for a result the model had been shown as a marker. */
  reasks?: number;
}

export interface MissRecord {
  sessionId: string;
  turn: number;
  call: { name: string; input: unknown };
  nearest: { name: string; input: unknown; differs: string[] }[];
  policy: 'error' | 'stop';
}

/** One change a side-effect check found (see src/verify/diff.ts). */
export interface ChangeRecord {
  kind: string;
  path: string;
  from?: string;
  type: string;
  fields: string[];
  detail?: string;
  layers: string[];
  time?: string;
}

/** A side-effect check around (one attempt of) a run. */
export interface CheckRecord {
  startedAt: string;
  finishedAt: string;
  roots: string[];
  entries: number;
  /** Manifest counts and times, watcher status, gaps: kept as the checker reported them. */
  summary: unknown;
  changes: ChangeRecord[];
}

/** What the checks of a run found, for listings. */
export interface CheckSummary {
  checks: number;
  changes: number;
  roots: string[];
}

/** One reason turns of a run failed, as the provider or the agent said it. */
export interface FailureCause {
  cause: string;
  count: number;
  /** The first turn it hit, in the run's session order. */
  first: { sessionId: string; turn: number };
}

/** Distinct failure causes listed with a run; the rest are summed into the last entry. */
const causesListed = 10;

/** Per-run figures, computed by SQL over the run's turns. */
export interface RunFigures {
  sessions: number;
  /** Free mode: sessions ended because a call was not in the recording (--on-miss stop). */
  sessionsDiverged: number;
  turnsDone: number;
  turnsFailed: number;
  matches: Record<Match, number>;
  callsPredicted: number;
  callsOriginal: number;
  callsMatched: number;
  /** Of the calls the model made, the share the original also made; null (undefined) when it made none. */
  precision: number | null;
  /** Of the original's calls, the share the model made too; null when the original made none. */
  recall: number | null;
  /** Why turns failed: each distinct cause, most frequent first, with the first turn it hit. */
  failures: FailureCause[];
  misses: number;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  /** --elide-repeats, summed over the turns' contexts (a result elided in every later context counts in each). */
  elision: { resultsElided: number; resultsCut: number; bytesSaved: number; reasks: number };
  /** Per session: the first turn whose tool calls differ from the original's, or null. */
  firstDivergence: { sessionId: string; turn: number | null }[];
}

/** One session's figures in a run: what a gate that failed names it by. */
export interface SessionFigures {
  sessionId: string;
  status: string;
  turnsDone: number;
  turnsFailed: number;
  callsPredicted: number;
  callsOriginal: number;
  callsMatched: number;
  misses: number;
  /** The first turn whose tool calls differ from the original's, or null. */
  firstDivergence: number | null;
}

/** One turn of a run as `runs compare` reads it. */
export interface TurnRow {
  turn: number;
  status: 'ok' | 'failed';
  match: Match | null;
  callsPredicted: number;
  callsOriginal: number;
  callsMatched: number;
  /** The completion as JSON (chat form), null for a failed turn. */
  response: string | null;
  error: string | null;
  misses: number;
}

export class RunStore {
  private readonly sql: (text: string) => Statement;

  constructor(private readonly db: Db) {
    this.sql = statementCache(db);
  }

  /** Stores a check and its changes at once: a run is never left with half a list of side effects. */
  saveCheck(runId: string, check: CheckRecord): void {
    this.db
      .transaction(() => {
        const { lastInsertRowid } = this.sql(
          `INSERT INTO run_checks (run_id, started_at, finished_at, roots, entries, changes, summary)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          runId,
          check.startedAt,
          check.finishedAt,
          JSON.stringify(check.roots),
          check.entries,
          check.changes.length,
          JSON.stringify(check.summary),
        );
        const insert = this.sql(
          `INSERT INTO run_changes (check_id, kind, path, from_path, type, fields, detail, layers, time)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const change of check.changes) {
          insert.run(
            lastInsertRowid,
            change.kind,
            change.path,
            change.from ?? null,
            change.type,
            JSON.stringify(change.fields),
            change.detail ?? null,
            JSON.stringify(change.layers),
            change.time ?? null,
          );
        }
      })
      .immediate();
  }

  /** Checks of a run so far; `checks` is 0 for a run from before the checker existed. */
  checkSummary(runId: string): CheckSummary {
    const rows = this.sql('SELECT roots, changes FROM run_checks WHERE run_id = ? ORDER BY id').all(
      runId,
    ) as {
      roots: string;
      changes: number;
    }[];
    const roots = new Set<string>();
    for (const row of rows) for (const root of JSON.parse(row.roots) as string[]) roots.add(root);
    return {
      checks: rows.length,
      changes: rows.reduce((n, row) => n + row.changes, 0),
      roots: [...roots],
    };
  }

  /** Every change found around a run, in the order found. */
  *changes(runId: string): Generator<ChangeRecord> {
    const rows = this.sql(
      `SELECT c.kind, c.path, c.from_path, c.type, c.fields, c.detail, c.layers, c.time
       FROM run_changes c JOIN run_checks k ON k.id = c.check_id
       WHERE k.run_id = ? ORDER BY c.rowid`,
    ).iterate(runId) as Iterable<{
      kind: string;
      path: string;
      from_path: string | null;
      type: string;
      fields: string;
      detail: string | null;
      layers: string;
      time: string | null;
    }>;
    for (const row of rows) {
      yield {
        kind: row.kind,
        path: row.path,
        ...(row.from_path ? { from: row.from_path } : {}),
        type: row.type,
        fields: JSON.parse(row.fields) as string[],
        ...(row.detail ? { detail: row.detail } : {}),
        layers: JSON.parse(row.layers) as string[],
        ...(row.time ? { time: row.time } : {}),
      };
    }
  }

  create(
    run: {
      id: string;
      model: string;
      mode: 'forced' | 'free';
      driver?: Driver;
      options: unknown;
      outFile: string;
      /** The process that runs it (src/processes.ts `thisProcess`). */
      owner?: unknown;
    },
    sessions: string[],
  ): void {
    // Whole or not at all: a run row with only some of its sessions (a full disk, a kill between the inserts)
    // would be resumed as a run of those alone and called done with the others never asked.
    this.db
      .transaction(() => {
        this.sql(
          `INSERT INTO runs (id, model, mode, driver, options, out_file, status, started_at, owner)
         VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
        ).run(
          run.id,
          run.model,
          run.mode,
          run.driver ?? 'builtin',
          JSON.stringify(run.options),
          run.outFile,
          new Date().toISOString(),
          run.owner === undefined ? null : JSON.stringify(run.owner),
        );
        const add = this.sql('INSERT INTO run_sessions (run_id, position, session_id) VALUES (?, ?, ?)');
        sessions.forEach((session, position) => {
          add.run(run.id, position, session);
        });
      })
      .immediate();
  }

  /** Every pairs file the store's runs wrote to, each once with the first run that did (absolute paths, as kept). */
  outFiles(): { file: string; run: string }[] {
    return this.sql('SELECT out_file AS file, min(id) AS run FROM runs GROUP BY out_file').all() as {
      file: string;
      run: string;
    }[];
  }

  /** The runs still marked running that write their pairs to `outFile` (an absolute path, as runs keep it). */
  runningInto(outFile: string): RunRow[] {
    return this.sql("SELECT * FROM runs WHERE status = 'running' AND out_file = ?").all(outFile) as RunRow[];
  }

  /** The run started last, if any. */
  latest(): RunRow | undefined {
    return this.sql('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1').get() as
      | RunRow
      | undefined;
  }

  get(id: string): RunRow | undefined {
    return this.sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  }

  /**
   * The run an id or a unique prefix of it names, as session ids are taken: `run_20261201T2057`, or without
   * the `run_`; `latest` is the run started last (no id is a word: ids begin with `run_` and a date). Throws a
   * StoreError naming the candidates when none or several match.
   */
  resolve(prefix: string): RunRow {
    if (prefix === LATEST) {
      const last = this.latest();
      if (!last) throw new StoreError('no replay run yet: latest names none', 'replay-history replay --help');
      return last;
    }
    const exact = this.get(prefix);
    if (exact) return exact;
    const bare = prefix.startsWith('run_') ? prefix : `run_${prefix}`;
    const found = this.sql(
      'SELECT * FROM runs WHERE substr(id, 1, length(?)) = ? ORDER BY started_at LIMIT 11',
    ).all(bare, bare) as RunRow[];
    if (found.length === 1) return found[0] as RunRow;
    if (found.length === 0)
      throw new StoreError(`no run matches '${prefix}'`, 'run replay-history runs to list them');
    const list = found
      .slice(0, 10)
      .map((row) => `  ${row.id}  ${row.model}  ${row.status}  ${row.started_at}`)
      .join('\n');
    throw new StoreError(
      `'${prefix}' matches ${found.length > 10 ? 'more than 10' : found.length} runs:\n${list}`,
      'give a longer prefix',
    );
  }

  sessions(id: string): string[] {
    return this.sql('SELECT session_id FROM run_sessions WHERE run_id = ? ORDER BY position')
      .pluck()
      .all(id) as string[];
  }

  finish(id: string, status: RunStatus, error?: string): void {
    this.sql('UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(
      status,
      error ?? null,
      new Date().toISOString(),
      id,
    );
  }

  /**
   * Takes the run for `owner` (a resume) unless `busy`, told the owner stored, returns an error (the process
   * running it is still there): then that error is thrown and nothing changes. One write transaction, so of two
   * resumes at once the second sees the first as the owner.
   */
  take(id: string, owner: unknown, busy: (stored: string | null) => Error | undefined): void {
    this.db
      .transaction(() => {
        const row = this.sql('SELECT status, owner FROM runs WHERE id = ?').get(id) as
          | { status: RunStatus; owner: string | null }
          | undefined;
        const error = row?.status === 'running' ? busy(row.owner) : undefined;
        if (error) throw error;
        this.sql('UPDATE runs SET owner = ? WHERE id = ?').run(JSON.stringify(owner), id);
      })
      .immediate();
  }

  /** Marks the run running again (a resume), by `owner` (src/processes.ts `thisProcess`). */
  reopen(id: string, owner?: unknown): void {
    this.sql(
      "UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, owner = ? WHERE id = ?",
    ).run(owner === undefined ? null : JSON.stringify(owner), id);
  }

  /** How a session of the run ended (free mode ends sessions as done, diverged or failed). */
  setSessionStatus(
    runId: string,
    sessionId: string,
    status: 'pending' | 'done' | 'diverged' | 'failed',
  ): void {
    this.sql('UPDATE run_sessions SET status = ? WHERE run_id = ? AND session_id = ?').run(
      status,
      runId,
      sessionId,
    );
  }

  /**
   * Forgets what the run recorded of one session (its turns and misses), leaving it pending: the session is
   * replayed again from its start. All at once, so the figures never count half of it.
   */
  restartSession(runId: string, sessionId: string): void {
    this.db
      .transaction(() => {
        this.sql('DELETE FROM run_turns WHERE run_id = ? AND session_id = ?').run(runId, sessionId);
        this.sql('DELETE FROM run_misses WHERE run_id = ? AND session_id = ?').run(runId, sessionId);
        this.setSessionStatus(runId, sessionId, 'pending');
      })
      .immediate();
  }

  /** Turns of the run, or of one of its sessions: answered and failed (without the rest of the figures). */
  turnCounts(runId: string, sessionId?: string): { done: number; failed: number } {
    return this.sql(
      `SELECT coalesce(sum(status = 'ok'), 0) AS done, coalesce(sum(status = 'failed'), 0) AS failed
       FROM run_turns WHERE run_id = ? AND (? IS NULL OR session_id = ?)`,
    ).get(runId, sessionId ?? null, sessionId ?? null) as { done: number; failed: number };
  }

  sessionStatus(runId: string, sessionId: string): string | undefined {
    return this.sql('SELECT status FROM run_sessions WHERE run_id = ? AND session_id = ?')
      .pluck()
      .get(runId, sessionId) as string | undefined;
  }

  /** Records a turn; a turn asked again (after a failure, on resume) replaces its earlier record. */
  saveTurn(runId: string, turn: TurnRecord): void {
    this.sql(
      `INSERT OR REPLACE INTO run_turns (run_id, session_id, turn, status, request_digest, response, match,
         calls_predicted, calls_original, calls_matched, prompt_tokens, completion_tokens, latency_ms, error,
         finished_at, results_elided, bytes_saved, reasks, results_cut)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      runId,
      turn.sessionId,
      turn.turn,
      turn.status,
      turn.requestDigest,
      turn.response === undefined ? null : JSON.stringify(turn.response),
      turn.match ?? null,
      turn.callsPredicted,
      turn.callsOriginal,
      turn.callsMatched,
      turn.promptTokens ?? null,
      turn.completionTokens ?? null,
      turn.latencyMs ?? null,
      turn.error ?? null,
      new Date().toISOString(),
      turn.resultsElided ?? 0,
      turn.bytesSaved ?? 0,
      turn.reasks ?? 0,
      turn.resultsCut ?? 0,
    );
  }

  saveMiss(runId: string, miss: MissRecord): void {
    this.sql(
      'INSERT INTO run_misses (run_id, session_id, turn, call, nearest, policy) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(
      runId,
      miss.sessionId,
      miss.turn,
      JSON.stringify(miss.call),
      JSON.stringify(miss.nearest),
      miss.policy,
    );
  }

  /** The calls of a run the recording did not hold, in the order they were asked. */
  *misses(runId: string): Generator<MissRecord> {
    const rows = this.sql(
      'SELECT session_id, turn, call, nearest, policy FROM run_misses WHERE run_id = ? ORDER BY rowid',
    ).iterate(runId) as Iterable<{
      session_id: string;
      turn: number;
      call: string;
      nearest: string;
      policy: 'error' | 'stop';
    }>;
    for (const row of rows) {
      yield {
        sessionId: row.session_id,
        turn: row.turn,
        call: JSON.parse(row.call) as MissRecord['call'],
        nearest: JSON.parse(row.nearest) as MissRecord['nearest'],
        policy: row.policy,
      };
    }
  }

  /** Turns of the run that finished well: they are not asked again on resume. */
  doneTurns(runId: string): Set<string> {
    const rows = this.sql("SELECT session_id, turn FROM run_turns WHERE run_id = ? AND status = 'ok'").all(
      runId,
    ) as {
      session_id: string;
      turn: number;
    }[];
    return new Set(rows.map((row) => turnKey(row.session_id, row.turn)));
  }

  figures(runId: string): RunFigures {
    const totals = this.sql(
      `SELECT count(DISTINCT session_id) AS sessions,
         coalesce(sum(status = 'ok'), 0) AS done, coalesce(sum(status = 'failed'), 0) AS failed,
         coalesce(sum(match = 'exact'), 0) AS exact, coalesce(sum(match = 'normalized'), 0) AS normalized,
         coalesce(sum(match = 'differs'), 0) AS differs, coalesce(sum(match = 'none'), 0) AS none,
         coalesce(sum(calls_predicted), 0) AS predicted, coalesce(sum(calls_original), 0) AS original,
         coalesce(sum(calls_matched), 0) AS matched, coalesce(sum(prompt_tokens), 0) AS prompt,
         coalesce(sum(completion_tokens), 0) AS completion, coalesce(sum(latency_ms), 0) AS latency,
         coalesce(sum(results_elided), 0) AS elided, coalesce(sum(bytes_saved), 0) AS saved,
         coalesce(sum(reasks), 0) AS reasks, coalesce(sum(results_cut), 0) AS cut
       FROM run_turns WHERE run_id = ?`,
    ).get(runId) as Record<string, number>;
    const misses = this.sql('SELECT count(*) FROM run_misses WHERE run_id = ?').pluck().get(runId) as number;
    const divergence = this.sql(
      `SELECT rs.session_id AS sessionId,
         (SELECT min(turn) FROM run_turns t WHERE t.run_id = rs.run_id AND t.session_id = rs.session_id
            AND t.match = 'differs') AS turn
       FROM run_sessions rs WHERE rs.run_id = ? ORDER BY rs.position`,
    ).all(runId) as { sessionId: string; turn: number | null }[];
    const n = (key: string) => totals[key] ?? 0;
    const diverged = this.sql("SELECT count(*) FROM run_sessions WHERE run_id = ? AND status = 'diverged'")
      .pluck()
      .get(runId) as number;
    return {
      sessions: divergence.length,
      sessionsDiverged: diverged,
      turnsDone: n('done'),
      turnsFailed: n('failed'),
      matches: { exact: n('exact'), normalized: n('normalized'), differs: n('differs'), none: n('none') },
      callsPredicted: n('predicted'),
      callsOriginal: n('original'),
      callsMatched: n('matched'),
      precision: n('predicted') === 0 ? null : n('matched') / n('predicted'),
      recall: n('original') === 0 ? null : n('matched') / n('original'),
      failures: n('failed') === 0 ? [] : this.failures(runId),
      misses,
      promptTokens: n('prompt'),
      completionTokens: n('completion'),
      latencyMs: n('latency'),
      elision: {
        resultsElided: n('elided'),
        resultsCut: n('cut'),
        bytesSaved: n('saved'),
        reasks: n('reasks'),
      },
      firstDivergence: divergence,
    };
  }

  /** A session's turns in a run, in turn order, with the misses of each. */
  turnRows(runId: string, sessionId: string): TurnRow[] {
    return this.sql(
      `SELECT t.turn, t.status, t.match, t.calls_predicted AS callsPredicted,
         t.calls_original AS callsOriginal, t.calls_matched AS callsMatched, t.response, t.error,
         (SELECT count(*) FROM run_misses m WHERE m.run_id = t.run_id AND m.session_id = t.session_id
            AND m.turn = t.turn) AS misses
       FROM run_turns t WHERE t.run_id = ? AND t.session_id = ? ORDER BY t.turn`,
    ).all(runId, sessionId) as TurnRow[];
  }

  /** Each session's figures, in the run's order. */
  *sessionFigures(runId: string): Generator<SessionFigures> {
    yield* this.sql(
      `SELECT rs.session_id AS sessionId, rs.status AS status,
         coalesce(sum(t.status = 'ok'), 0) AS turnsDone, coalesce(sum(t.status = 'failed'), 0) AS turnsFailed,
         coalesce(sum(t.calls_predicted), 0) AS callsPredicted,
         coalesce(sum(t.calls_original), 0) AS callsOriginal,
         coalesce(sum(t.calls_matched), 0) AS callsMatched,
         (SELECT count(*) FROM run_misses m WHERE m.run_id = rs.run_id AND m.session_id = rs.session_id)
           AS misses,
         min(CASE WHEN t.match = 'differs' THEN t.turn END) AS firstDivergence
       FROM run_sessions rs
       LEFT JOIN run_turns t ON t.run_id = rs.run_id AND t.session_id = rs.session_id
       WHERE rs.run_id = ?
       GROUP BY rs.session_id
       ORDER BY rs.position`,
    ).iterate(runId) as Iterable<SessionFigures>;
  }

  /**
   * The distinct causes of the run's failed turns with their counts and the first turn each hit (by the
   * session's place in the run, then the turn). Beyond the first few, the rest are summed up as one entry.
   */
  failures(runId: string): FailureCause[] {
    // Causes that differ only in their numbers (token counts, message counts, ports) are one cause: each is
    // shown by the text of its first occurrence. A status code after "HTTP " stays apart: 400 is not 500.
    // Rows come in run order, so the first row of a cause is where it first hit and `rank` is that order.
    const classes = new Map<string, FailureCause & { rank: number }>();
    const rows = this.sql(
      `SELECT coalesce(t.error, 'no cause recorded') AS cause, t.session_id AS sessionId, t.turn AS turn
       FROM run_turns t
       LEFT JOIN run_sessions rs ON rs.run_id = t.run_id AND rs.session_id = t.session_id
       WHERE t.run_id = ? AND t.status = 'failed'
       ORDER BY coalesce(rs.position, 0), t.turn, t.session_id`,
    ).iterate(runId) as Iterable<{ cause: string; sessionId: string; turn: number }>;
    for (const row of rows) {
      const key = row.cause.replace(/(?<!HTTP )\d+/g, '#');
      const known = classes.get(key);
      if (known) known.count++;
      else
        classes.set(key, {
          cause: row.cause,
          count: 1,
          first: { sessionId: row.sessionId, turn: row.turn },
          rank: classes.size,
        });
    }
    const sorted = [...classes.values()].sort((a, b) => b.count - a.count || a.rank - b.rank);
    const listed = sorted.length <= causesListed ? sorted : sorted.slice(0, causesListed - 1);
    const causes: FailureCause[] = listed.map(({ cause, count, first }) => ({ cause, count, first }));
    const rest = sorted.slice(listed.length);
    if (rest.length > 0) {
      const earliest = rest.reduce((a, b) => (b.rank < a.rank ? b : a));
      causes.push({
        cause: `${rest.length} other cause(s)`,
        count: rest.reduce((n, c) => n + c.count, 0),
        first: earliest.first,
      });
    }
    return causes;
  }

  *list(): Generator<RunRow> {
    yield* this.sql('SELECT * FROM runs ORDER BY started_at').iterate() as Iterable<RunRow>;
  }
}

/** The word that names the run started last wherever a run id is taken. */
export const LATEST = 'latest';

export function turnKey(sessionId: string, turn: number): string {
  return `${sessionId}#${turn}`;
}

/** The session a `turnKey` names. */
export function keySession(key: string): string {
  return key.slice(0, key.lastIndexOf('#'));
}
