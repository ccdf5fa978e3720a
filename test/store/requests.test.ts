// The request log of a live Claude Code 2.1.328 transcript as it grows: each ingest stores what the file holds
// so far, and the next one the rest, with every turn's request rebuilt exactly both times.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { messageHash, type WireBlock, type WireMessage } from '../../src/model/request.js';
import { ingest } from '../../src/sources/ingest.js';
import { type Db, openDb } from '../../src/store/db.js';
import { migrations } from '../../src/store/migrations.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root, tempDir } from '../helpers/cli.js';
import { tempStore } from '../helpers/store.js';

const source = join(
  root,
  'test/fixtures/real/claude-code-2.1.328/projects/-home-ada-projects-demo-app/5d5d5d5d-0004-4000-8000-00000000000d.jsonl',
);
const lines = readFileSync(source, 'utf8').split('\n').filter(Boolean);
// Cut just before the last request record: the first two requests and their responses are written.
const cut = lines.findLastIndex((line) => line.startsWith('{"type":"api-request"'));
const requests = (upTo: number) =>
  lines.slice(0, upTo).filter((line) => line.startsWith('{"type":"api-request"')).length;

const store = tempStore();
afterAll(() => store.close());
const file = join(store.dir, '5d5d5d5d-0004-4000-8000-00000000000d.jsonl');
const sessions = new SessionStore(store.db);
const mainId = () => [...sessions.list()].find((row) => row.kind === 'main')?.id as string;
const count = (table: string) =>
  store.db.prepare(`SELECT count(*) FROM ${table} WHERE session_id = ?`).pluck().get(mainId()) as number;

describe('a growing transcript’s request log', () => {
  it('stores the requests the file holds so far, each rebuilt exactly', () => {
    writeFileSync(file, `${lines.slice(0, cut).join('\n')}\n`);
    ingest(store.db, [file]);
    const { byResponse } = sessions.loadRequests(mainId());
    expect(byResponse.size).toBe(requests(cut));
    expect([...byResponse.values()].map((r) => r.fidelity)).toEqual(['exact', 'exact']);
  });

  it('adds the rest when it grows, keeping the messages already stored (no duplicate rows)', () => {
    appendFileSync(file, `${lines.slice(cut).join('\n')}\n`);
    const [summary] = ingest(store.db, [file]);
    expect(summary?.sessions.updated).toBe(1);
    const { byResponse } = sessions.loadRequests(mainId());
    expect(byResponse.size).toBe(requests(lines.length));
    expect([...byResponse.values()].every((r) => r.fidelity === 'exact')).toBe(true);
    const log = sessions.requestLog(mainId());
    expect(count('request_messages')).toBe(Object.keys(log?.messages ?? {}).length);
    expect(count('requests')).toBe(requests(lines.length));
    // Nothing changed: nothing is written again.
    const [again] = ingest(store.db, [file]);
    expect(again?.files.unchanged).toBe(1);
  });
});

describe('request shapes shared between sessions', () => {
  const projects = join(root, 'test/fixtures/real/claude-code-2.1.328/projects/-home-ada-projects-demo-app');
  const a = '5a5a5a5a-0001-4000-8000-00000000000a';
  const b = '5b5b5b5b-0002-4000-8000-00000000000b';
  const bodies = (db: Db) => db.prepare('SELECT count(*) FROM shape_bodies').pluck().get() as number;
  /** Every request of the session rebuilt, and how well: one entry per response, then the unbound ones. */
  const rebuilt = (db: Db, sourceId: string) => {
    const s = new SessionStore(db);
    const id = [...s.list()].find((row) => row.source_id === sourceId)?.id as string;
    const { byResponse, unbound } = s.loadRequests(id);
    return [...byResponse.values(), ...unbound].map((r) => r.fidelity);
  };
  const recorded = (sourceId: string) =>
    readFileSync(join(projects, `${sourceId}.jsonl`), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{"type":"api-request"')).length;
  const requestRows = (db: Db) => db.prepare('SELECT count(*) FROM requests').pluck().get() as number;

  it('keeps one body for a shape every session names, and drops it when no session does any more', () => {
    const shared = tempStore();
    try {
      const fileA = join(shared.dir, `${a}.jsonl`);
      const fileB = join(shared.dir, `${b}.jsonl`);
      writeFileSync(fileA, readFileSync(join(projects, `${a}.jsonl`)));
      writeFileSync(fileB, readFileSync(join(projects, `${b}.jsonl`)));
      ingest(shared.db, [fileA, fileB]);
      // Both main sessions were sent shape d23bfaf4…: one body, named twice.
      expect(shared.db.prepare('SELECT count(*) FROM request_shapes').pluck().get()).toBe(2);
      expect(bodies(shared.db)).toBe(1);
      expect(requestRows(shared.db)).toBe(recorded(a) + recorded(b));
      expect(rebuilt(shared.db, a).length).toBeGreaterThan(0);
      expect(rebuilt(shared.db, b).length).toBeGreaterThan(0);
      expect(new Set([...rebuilt(shared.db, a), ...rebuilt(shared.db, b)])).toEqual(new Set(['exact']));

      // The same transcripts without their request records: the body goes with the last session naming it.
      const withoutRequests = (file: string) =>
        writeFileSync(
          file,
          `${readFileSync(file, 'utf8')
            .split('\n')
            .filter((line) => line !== '' && !line.startsWith('{"type":"api-request'))
            .join('\n')}\n`,
        );
      withoutRequests(fileA);
      ingest(shared.db, [fileA]);
      expect(bodies(shared.db)).toBe(1);
      expect(requestRows(shared.db)).toBe(recorded(b));
      expect(new Set(rebuilt(shared.db, b))).toEqual(new Set(['exact']));
      withoutRequests(fileB);
      ingest(shared.db, [fileB]);
      expect(shared.db.prepare('SELECT count(*) FROM request_shapes').pluck().get()).toBe(0);
      expect(bodies(shared.db)).toBe(0);
    } finally {
      shared.close();
    }
  });

  it('stores a shape that has another one’s hash but not its content as its own body', () => {
    // Two sessions in one ingest, the second's shape edited under the same shape hash (a corrupt or tampered
    // log): the body of the first, kept in memory to skip serialising it again, must not be reused for it.
    const shared = tempStore();
    try {
      const fileA = join(shared.dir, `${a}.jsonl`);
      const fileB = join(shared.dir, `${b}.jsonl`);
      writeFileSync(fileA, readFileSync(join(projects, `${a}.jsonl`)));
      const edited = readFileSync(join(projects, `${b}.jsonl`), 'utf8')
        .split('\n')
        .map((line) =>
          line.startsWith('{"type":"api-request-shape"')
            ? line.replace('"You are a Claude agent', '"You are an edited Claude agent')
            : line,
        )
        .join('\n');
      expect(edited).toContain('You are an edited Claude agent');
      writeFileSync(fileB, edited);
      ingest(shared.db, [fileA, fileB]);
      expect(bodies(shared.db)).toBe(2);
      const systems = shared.db
        .prepare(
          `SELECT s.session_id, b.system FROM request_shapes s JOIN shape_bodies b USING (digest)
           JOIN sessions ON sessions.id = s.session_id ORDER BY sessions.source_id`,
        )
        .all() as { system: string }[];
      expect(systems.map((row) => row.system.includes('You are an edited Claude agent'))).toEqual([
        false,
        true,
      ]);
    } finally {
      shared.close();
    }
  });

  it('moves the bodies of a store made before m009_shared_shape_bodies, every request still exact', () => {
    // The store as the current version writes it, copied into one that has only the migrations before m009,
    // with each shape's body back in its request_shapes row as that version stored it.
    const current = tempStore();
    const scratch = tempDir('replay-m009-');
    const oldPath = join(scratch.path, 'old.db');
    try {
      ingest(current.db, [join(projects, `${a}.jsonl`)]);
      const fidelities = rebuilt(current.db, a);
      expect(fidelities.length).toBeGreaterThan(0);
      const shapes = current.db
        .prepare(
          'SELECT s.session_id, s.hash, b.system, b.tools FROM request_shapes s JOIN shape_bodies b USING (digest)',
        )
        .all();
      current.db.close();
      const raw = new Database(oldPath);
      raw.exec(
        'CREATE TABLE migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)',
      );
      const before = migrations.findIndex((m) => m.name === 'm009_shared_shape_bodies');
      migrations.slice(0, before).forEach((m, index) => {
        raw.exec(m.sql);
        raw.prepare('INSERT INTO migrations (name, applied_at) VALUES (?, ?)').run(m.name, 'then');
        raw.pragma(`user_version = ${index + 1}`);
      });
      raw.exec(`ATTACH '${current.path}' AS current`);
      for (const table of ['sessions', 'messages', 'source_files', 'requests', 'request_messages']) {
        // The columns the old schema has (later migrations add some to these tables).
        const columns = (raw.pragma(`main.table_info(${table})`) as { name: string }[])
          .map((column) => column.name)
          .join(', ');
        raw.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM current.${table}`);
      }
      const insert = raw.prepare(
        'INSERT INTO request_shapes (session_id, hash, system, tools) VALUES (@session_id, @hash, @system, @tools)',
      );
      for (const row of shapes) insert.run(row);
      raw.close();

      const upgraded = openDb(oldPath);
      try {
        expect(bodies(upgraded)).toBe(1);
        expect(upgraded.prepare('SELECT digest FROM request_shapes').pluck().all()).toEqual([
          expect.stringMatching(/^m009:/),
        ]);
        expect(requestRows(upgraded)).toBe(recorded(a));
        expect(rebuilt(upgraded, a)).toEqual(fidelities);
        expect(new Set(fidelities)).toEqual(new Set(['exact']));
      } finally {
        upgraded.close();
      }
    } finally {
      current.close();
      scratch.remove();
    }
  });
});

describe('tool results a request message names instead of holding', () => {
  // The real transcript with three of its tool results rewritten (and the tail hashes that name their messages
  // with them): one long string, one list of text blocks (a sub-agent's or an MCP tool's answer), one image.
  const transcript = readFileSync(
    join(
      root,
      'test/fixtures/real/claude-code-2.1.328/projects/-home-ada-projects-demo-app/5a5a5a5a-0001-4000-8000-00000000000a.jsonl',
    ),
    'utf8',
  )
    .split('\n')
    .filter(Boolean);
  const tails = transcript.filter((line) => line.startsWith('{"type":"api-request"')).join('\n');
  // Lines sent as a message of their own (not merged with the results of parallel calls).
  const results = transcript
    .map((line, index) => ({ index, value: JSON.parse(line) }))
    .filter(
      ({ value }) =>
        value.type === 'user' &&
        Array.isArray(value.message?.content) &&
        value.message.content.length === 1 &&
        value.message.content[0].type === 'tool_result' &&
        tails.includes(messageHash({ role: 'user', content: value.message.content })),
    );
  const rewrite: Record<string, unknown>[] = [
    { kind: 'string', content: `long output ${'s'.repeat(400)}` },
    {
      kind: 'text blocks',
      content: [
        { type: 'text', text: `answer ${'t'.repeat(400)}` },
        { type: 'text', text: 'end' },
      ],
    },
    {
      kind: 'image',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(600) } },
      ],
    },
  ];

  it('names long strings and lists of text blocks by call id, keeps an image whole, and rebuilds each exactly', () => {
    expect(results.length).toBeGreaterThanOrEqual(rewrite.length);
    const edited = transcript.slice();
    const hashes: { kind: string; hash: string; content: unknown }[] = [];
    rewrite.forEach(({ kind, content }, i) => {
      const { index, value } = results[i] as { index: number; value: { message: WireMessage } };
      const before = messageHash({ role: 'user', content: value.message.content });
      const block = (value.message.content as WireBlock[])[0] as WireBlock;
      value.message.content = [{ ...block, content }] as WireBlock[];
      const after = messageHash({ role: 'user', content: value.message.content });
      edited[index] = JSON.stringify(value);
      for (let j = 0; j < edited.length; j++)
        if (edited[j]?.startsWith('{"type":"api-request"'))
          edited[j] = (edited[j] as string).replaceAll(before, after);
      hashes.push({ kind: kind as string, hash: after, content });
    });
    const scratch = tempStore();
    try {
      const path = join(scratch.dir, '5a5a5a5a-0001-4000-8000-00000000000a.jsonl');
      writeFileSync(path, `${edited.join('\n')}\n`);
      ingest(scratch.db, [path]);
      const mine = new SessionStore(scratch.db);
      const id = [...mine.list()].find((row) => row.kind === 'main')?.id as string;
      const stored = (hash: string) =>
        scratch.db
          .prepare('SELECT message, origin FROM request_messages WHERE session_id = ? AND hash = ?')
          .get(id, hash) as { message: string; origin: string };
      const named = hashes.map(({ hash }) => stored(hash).message.includes('"$result"'));
      expect(hashes.map(({ hash }) => stored(hash).origin)).toEqual([
        'transcript',
        'transcript',
        'transcript',
      ]);
      expect(named).toEqual([true, true, false]);

      const { byResponse } = mine.loadRequests(id);
      expect([...byResponse.values()].every((r) => r.fidelity === 'exact')).toBe(true);
      const sent = new Map(
        [...byResponse.values()].flatMap((r) => r.messages.map((m) => [m.hash, m] as const)),
      );
      for (const { hash, content } of hashes) {
        const message = sent.get(hash);
        expect(message).toBeDefined();
        const rebuilt = { role: message?.role, content: message?.content } as WireMessage;
        // Put back as it was recorded: the same hash, the same output.
        expect(messageHash(rebuilt)).toBe(hash);
        expect((rebuilt.content as WireBlock[])[0]?.content).toEqual(content);
      }
    } finally {
      scratch.close();
    }
  });
});
