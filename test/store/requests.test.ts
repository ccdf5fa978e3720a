// The request log of a live Claude Code 2.1.328 transcript as it grows: each ingest stores what the file holds
// so far, and the next one the rest, with every turn's request rebuilt exactly both times.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingest } from '../../src/sources/ingest.js';
import { SessionStore } from '../../src/store/sessions.js';
import { root } from '../helpers/cli.js';
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
