// What `stats --fidelity` does, loaded only when it runs (it needs no tokenizer, unlike --elision).
import { type Rebuilt, type TurnFidelity, turnFidelity } from '../../model/fidelity.js';
import { turns } from '../../model/turns.js';
import { geminiNotRebuilt } from '../../sources/gemini/fidelity.js';
import { qwenNotRebuilt } from '../../sources/qwen/fidelity.js';
import type { Db } from '../../store/db.js';
import { SessionStore } from '../../store/sessions.js';
import { collectGarbage } from '../memory.js';
import { progressBar, table, writeOut } from '../output.js';
import type { StatsOptions } from './stats.js';
import { resolveTargets } from './targets.js';

const kinds: readonly Rebuilt[] = ['exact', 'partial', 'attachments', 'conversation'];

interface SessionFidelity {
  session: string;
  agent: string;
  title: string | null;
  turns: TurnFidelity[];
  counts: Record<Rebuilt, number>;
  /** Over the turns rebuilt from request records: messages rebuilt, and how many hash to their tail hash. */
  tail: { messages: number; matching: number };
  /** Recorded requests no model turn followed (a failed call, a retry). */
  unboundRequests: number;
}

/**
 * Per session, how each turn's context was rebuilt: exact from the agent's request records, partly, from the
 * conversation with the harness text logged as attachments, or from the conversation alone; and for those
 * rebuilt from records, whether each rebuilt message hashes to the tail hash it was recorded under (a
 * self-check of the reader on the user's own history).
 */
export async function fidelityReport(db: Db, targets: string[], options: StatsOptions): Promise<void> {
  const store = new SessionStore(db);
  const ids = await resolveTargets(db, targets, targets.length === 0, 'nothing to count');
  const bar = progressBar('stats');
  const results: SessionFidelity[] = [];
  ids.forEach((id, index) => {
    const loaded = store.load(id);
    if (!loaded) return;
    const { byResponse, unbound } = store.loadRequests(id);
    const counts = { exact: 0, partial: 0, attachments: 0, conversation: 0 };
    const tail = { messages: 0, matching: 0 };
    const list: TurnFidelity[] = [];
    for (const turn of turns(loaded.session.messages, loaded.own)) {
      const nativeId = turn.response.nativeId;
      const fidelity = turnFidelity(turn, nativeId !== undefined ? byResponse.get(nativeId) : undefined);
      // Qwen Code logs the conversation only: say what of its requests that leaves out.
      if (loaded.session.agent === 'qwen') fidelity.notRebuilt = qwenNotRebuilt(turn.context);
      // Gemini CLI too (its system instruction, tools and config are in no log).
      if (loaded.session.agent === 'gemini') fidelity.notRebuilt = geminiNotRebuilt(turn.context);
      counts[fidelity.rebuilt]++;
      if (fidelity.tail) {
        tail.messages += fidelity.tail.messages;
        tail.matching += fidelity.tail.matching;
      }
      list.push(fidelity);
    }
    const row = store.row(id);
    results.push({
      session: id,
      agent: loaded.session.agent,
      title: row?.title ?? null,
      turns: list,
      counts,
      tail,
      unboundRequests: unbound.length,
    });
    bar.update(index + 1, ids.length, 'sessions');
    if (index % 256 === 255) collectGarbage();
  });
  bar.end();

  const totals = { exact: 0, partial: 0, attachments: 0, conversation: 0 };
  for (const result of results) for (const kind of kinds) totals[kind] += result.counts[kind];
  if (options.json) {
    writeOut(JSON.stringify({ sessions: results, totals }, null, 2));
    return;
  }
  const rows = [
    ['SESSION', 'AGENT', 'TURNS', 'EXACT', 'PARTIAL', 'ATTACHMENTS', 'CONVERSATION', 'TAIL HASHES'],
  ];
  for (const result of results) {
    rows.push([
      result.session.slice(0, 12),
      result.agent,
      String(result.turns.length),
      ...kinds.map((kind) => String(result.counts[kind])),
      result.tail.messages > 0 ? `${result.tail.matching}/${result.tail.messages} match` : '–',
    ]);
  }
  writeOut(table(rows));
  for (const result of results)
    for (const turn of result.turns)
      if (turn.rebuilt === 'partial')
        writeOut(`${result.session.slice(0, 12)} turn ${turn.turn}: partial, ${turn.notRebuilt.join('; ')}`);
  for (const result of results)
    if (result.agent === 'qwen' && result.turns.length > 0)
      writeOut(`${result.session.slice(0, 12)} (qwen): not in the log: ${qwenNotRebuilt([]).join('; ')}`);
  for (const result of results)
    if (result.agent === 'gemini' && result.turns.length > 0)
      writeOut(`${result.session.slice(0, 12)} (gemini): not in the log: ${geminiNotRebuilt([]).join('; ')}`);
  const all = kinds.reduce((n, kind) => n + totals[kind], 0);
  writeOut(
    `${results.length} session(s), ${all} turn(s): ${totals.exact} exact from request records, ` +
      `${totals.partial} partly, ${totals.attachments} rebuilt from attachments, ${totals.conversation} conversation only`,
  );
}
