// Named, append-only migrations. Never edit or reorder one that has shipped: add a new one at the end.
// Each runs in its own transaction; the names applied are recorded in `migrations`.

export interface Migration {
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  {
    name: 'm001_initial',
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        source_id TEXT NOT NULL,
        kind TEXT NOT NULL,              -- main | subagent | compaction
        origin TEXT NOT NULL,            -- file | mirror (rebuilt from copies inside another log)
        parent_id TEXT,                  -- no foreign key: a sub-agent may be ingested before its parent
        parent_tool_call_id TEXT,
        continues_session_id TEXT,       -- copied history of a resumed/forked session is stored once, there
        continues_native_id TEXT,
        cwd TEXT,
        title TEXT,
        started_at TEXT,
        ended_at TEXT,
        version TEXT,
        source_file TEXT,
        message_count INTEGER NOT NULL,
        turn_count INTEGER NOT NULL,
        tool_call_count INTEGER NOT NULL,
        unanswered_count INTEGER NOT NULL,
        meta_hash TEXT NOT NULL,
        ingested_at TEXT NOT NULL,
        UNIQUE (agent, source_id)
      );
      CREATE INDEX sessions_parent ON sessions (parent_id);
      CREATE INDEX sessions_started ON sessions (started_at);

      CREATE TABLE messages (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        native_id TEXT,
        model TEXT,
        timestamp TEXT,
        injected INTEGER NOT NULL DEFAULT 0,
        compaction INTEGER NOT NULL DEFAULT 0,
        preserved TEXT,                  -- JSON array of native ids
        usage TEXT,                      -- JSON
        parts TEXT NOT NULL,             -- JSON array of parts
        source TEXT NOT NULL,            -- JSON SourceRef: {file, line, endLine?} or {db, table, row}
        hash TEXT NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE INDEX messages_native ON messages (native_id) WHERE native_id IS NOT NULL;

      -- Which tool call of a parent started a sub-agent (known from either side, in either order).
      CREATE TABLE spawns (
        child_id TEXT PRIMARY KEY,
        parent_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL
      );

      -- What was read of each log file, so unchanged files are not parsed again.
      CREATE TABLE source_files (
        path TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        inode INTEGER NOT NULL,
        parsed_bytes INTEGER NOT NULL,
        ingested_at TEXT NOT NULL
      );
    `,
  },
  {
    name: 'm002_runs',
    sql: `
      -- One replay run: what was asked of which model, how, and how it went.
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        mode TEXT NOT NULL,              -- forced | free
        options TEXT NOT NULL,           -- JSON: everything needed to resume the run as it was started
        out_file TEXT NOT NULL,
        status TEXT NOT NULL,            -- running | done | failed | interrupted
        error TEXT,
        started_at TEXT NOT NULL,
        finished_at TEXT
      );

      -- The sessions a run covers, in the order it takes them.
      CREATE TABLE run_sessions (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',  -- pending | done | diverged | failed
        PRIMARY KEY (run_id, position)
      );

      -- Each model turn asked in a run. A failed turn keeps its error and is asked again on --resume.
      CREATE TABLE run_turns (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,           -- 1-based, as in pairs.jsonl and \`show --turn\`
        status TEXT NOT NULL,            -- ok | failed
        request_digest TEXT NOT NULL,    -- sha256 of the request body sent (or that would be sent)
        response TEXT,                   -- JSON: the completion, OpenAI chat form
        match TEXT,                      -- exact | normalized | differs | none
        calls_predicted INTEGER NOT NULL DEFAULT 0,
        calls_original INTEGER NOT NULL DEFAULT 0,
        calls_matched INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms INTEGER,
        error TEXT,
        finished_at TEXT NOT NULL,
        PRIMARY KEY (run_id, session_id, turn)
      );

      -- Tool calls the recording could not answer (free mode), with the nearest recorded calls.
      CREATE TABLE run_misses (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        call TEXT NOT NULL,              -- JSON: {name, input}
        nearest TEXT NOT NULL,           -- JSON: [{name, input, differs: [field…]}]
        policy TEXT NOT NULL             -- error | stop
      );
      CREATE INDEX run_misses_run ON run_misses (run_id);
    `,
  },
  {
    name: 'm003_run_checks',
    sql: `
      -- The side-effect check around a run (each attempt: a resumed run is checked again), and what it found.
      CREATE TABLE run_checks (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        roots TEXT NOT NULL,             -- JSON: the directories checked
        entries INTEGER NOT NULL,        -- entries in the final manifest
        changes INTEGER NOT NULL,
        summary TEXT NOT NULL            -- JSON: manifest counts and times, watcher status, gaps
      );
      CREATE INDEX run_checks_run ON run_checks (run_id);

      CREATE TABLE run_changes (
        check_id INTEGER NOT NULL REFERENCES run_checks (id) ON DELETE CASCADE,
        kind TEXT NOT NULL,              -- created | modified | deleted | renamed | mode changed | …
        path TEXT NOT NULL,
        from_path TEXT,                  -- renamed: where it was
        type TEXT NOT NULL,              -- file | directory | symlink | …
        fields TEXT NOT NULL,            -- JSON: what differs
        detail TEXT,
        layers TEXT NOT NULL,            -- JSON: manifest, watcher
        time TEXT                        -- when the watcher first saw it
      );
      CREATE INDEX run_changes_check ON run_changes (check_id);
    `,
  },
  {
    name: 'm004_turn_elision',
    sql: `
      -- --elide-repeats / --max-result-bytes: tool results of the turn's context shown as a marker, the bytes
      -- not sent (markers and cuts), results cut to the limit, and (free mode) calls the model made again for a
      -- result it had been shown as a marker.
      ALTER TABLE run_turns ADD COLUMN results_elided INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE run_turns ADD COLUMN bytes_saved INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE run_turns ADD COLUMN results_cut INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE run_turns ADD COLUMN reasks INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    name: 'm005_run_driver',
    sql: `
      -- Who ran the agent loop: builtin (our own) or opencode (the real binary, tools overridden).
      ALTER TABLE runs ADD COLUMN driver TEXT NOT NULL DEFAULT 'builtin';
    `,
  },
  {
    name: 'm006_source_parser',
    sql: `
      -- Which version of the agent's reader read each file: another version reads it again.
      ALTER TABLE source_files ADD COLUMN parser TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    name: 'm007_requests',
    sql: `
      -- The requests an agent recorded for its model turns (Claude Code 2.1.3xx), delta-encoded as it wrote
      -- them: each request is the first \`keep\` messages of its base request, then the messages of its tail.
      CREATE TABLE requests (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        record_id TEXT NOT NULL,         -- the agent's id of the record
        response_id TEXT,                -- native id of the response message it produced (none: no model turn)
        shape_hash TEXT NOT NULL,
        params TEXT NOT NULL,            -- JSON: model, betas, max_tokens, thinking, …
        base TEXT,                       -- record id of the base request
        keep INTEGER NOT NULL,
        tail TEXT NOT NULL,              -- JSON array of message hashes
        cache_control TEXT NOT NULL,     -- JSON array of {path, value}
        digest TEXT,
        line INTEGER,
        PRIMARY KEY (session_id, seq)
      );
      -- System blocks and tools, once per session and shape.
      CREATE TABLE request_shapes (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        hash TEXT NOT NULL,
        system TEXT NOT NULL,            -- JSON array of blocks
        tools TEXT NOT NULL,             -- JSON array of tool definitions
        PRIMARY KEY (session_id, hash)
      );
      -- Every message a tail names, in the wire form it was sent in, once per session and hash.
      CREATE TABLE request_messages (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        hash TEXT NOT NULL,
        message TEXT NOT NULL,           -- JSON {role, content, …}
        origin TEXT NOT NULL,            -- blob (a record of its own) | transcript (built from user/assistant lines)
        PRIMARY KEY (session_id, hash)
      );
      -- What the request rows of a session were made from: another value rewrites them.
      ALTER TABLE sessions ADD COLUMN requests_hash TEXT;
    `,
  },
  {
    name: 'm008_message_attachment',
    sql: `
      -- Harness text an agent logged as a rendered attachment: the attachment's type (Claude Code 2.1.3xx).
      ALTER TABLE messages ADD COLUMN attachment TEXT;
    `,
  },
  {
    name: 'm009_shared_shape_bodies',
    sql: `
      -- A shape's system blocks and tools (~37 KB) are the same in every session of one Claude Code version and
      -- tool set: kept once, by a digest of their JSON, and named from each session's request_shapes row.
      CREATE TABLE shape_bodies (
        digest TEXT PRIMARY KEY,         -- fieldsHash of [system, tools] as stored; m009:<session>:<hash> for rows moved here
        system TEXT NOT NULL,            -- JSON array of blocks
        tools TEXT NOT NULL              -- JSON array of tool definitions
      );
      INSERT INTO shape_bodies (digest, system, tools)
        SELECT 'm009:' || session_id || ':' || hash, system, tools FROM request_shapes;
      ALTER TABLE request_shapes ADD COLUMN digest TEXT REFERENCES shape_bodies (digest);
      UPDATE request_shapes SET digest = 'm009:' || session_id || ':' || hash;
      ALTER TABLE request_shapes DROP COLUMN system;
      ALTER TABLE request_shapes DROP COLUMN tools;
      CREATE INDEX request_shapes_digest ON request_shapes (digest);
    `,
  },
  {
    name: 'm010_continues_line',
    sql: `
      -- A fork that points at its parent's log instead of copying it (Codex 0.169 history_base): the session
      -- continues continues_session_id with the messages read from that log's first continues_line lines.
      ALTER TABLE sessions ADD COLUMN continues_line INTEGER;
    `,
  },
  {
    name: 'm011_source_resume',
    sql: `
      -- What a reader keeps of a log to continue it from parsed_bytes next time instead of reading it again
      -- (JSON: the session the new lines continue, a check of the bytes already read, the reader's own state).
      -- NULL: the next read of a grown file starts from its first byte.
      ALTER TABLE source_files ADD COLUMN resume TEXT;
    `,
  },
  {
    name: 'm012_run_owner',
    sql: `
      -- The process running the run (JSON: pid, host, and when it started where the kernel says): a run still
      -- 'running' whose process is gone was stopped without a word (SIGKILL, a crash, a full disk), and one whose
      -- process is there must not be resumed meanwhile. NULL for runs made before.
      ALTER TABLE runs ADD COLUMN owner TEXT;
    `,
  },
];
