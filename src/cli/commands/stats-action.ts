// What `stats --elision` does, loaded only when it runs: the tokenizer alone takes half a second to load.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { elideOptions } from '../../replay/elide.js';
import { addSession, emptyFigures, type ToolFigures, totals } from '../../replay/elision-stats.js';
import type { openDb } from '../../store/db.js';
import { SessionStore } from '../../store/sessions.js';
import { collectGarbage } from '../memory.js';
import { formatBytes, progressBar, table, writeOut } from '../output.js';
import type { StatsOptions } from './stats.js';
import { resolveTargets } from './targets.js';

export async function elisionReport(
  db: ReturnType<typeof openDb>,
  targets: string[],
  options: StatsOptions,
): Promise<void> {
  const sessions = new SessionStore(db);
  const ids = await resolveTargets(db, targets, targets.length === 0, 'nothing to count');
  const figures = emptyFigures();
  const bar = progressBar('stats');
  const settings = {
    elideRepeats: true,
    extraTools: options.elideTool,
    ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
  };
  ids.forEach((id, index) => {
    const loaded = sessions.load(id);
    if (!loaded) return;
    const elide = elideOptions(loaded.session.agent, settings);
    if (elide) addSession(figures, loaded.session, loaded.own, elide, countTokens);
    bar.update(index + 1, ids.length, 'sessions');
    // One session at a time; a full collection now and then keeps memory flat over thousands.
    if (index % 256 === 255) collectGarbage();
  });
  bar.end();

  const rows = [...figures.perTool.entries()].sort(
    (a, b) => b[1].bytesBefore - b[1].bytesAfter - (a[1].bytesBefore - a[1].bytesAfter),
  );
  const all = totals(figures);
  if (options.json) {
    writeOut(
      JSON.stringify(
        {
          sessions: figures.sessions,
          total: all,
          perTool: Object.fromEntries(rows),
          acrossContexts: figures.contexts,
        },
        null,
        2,
      ),
    );
    return;
  }
  const saved = (before: number, after: number) =>
    before === 0 ? '0.0%' : `${(((before - after) / before) * 100).toFixed(1)}%`;
  const line = (tool: string, f: ToolFigures) => [
    tool,
    String(f.results),
    String(f.elided),
    ...(options.maxResultBytes !== undefined ? [String(f.truncated)] : []),
    `${formatBytes(f.bytesBefore)} → ${formatBytes(f.bytesAfter)}`,
    `${f.tokensBefore} → ${f.tokensAfter}`,
    saved(f.tokensBefore, f.tokensAfter),
  ];
  writeOut(
    table([
      [
        'TOOL',
        'RESULTS',
        'ELIDED',
        ...(options.maxResultBytes !== undefined ? ['CUT'] : []),
        'BYTES',
        'TOKENS',
        'SAVED',
      ],
      ...rows.map(([tool, f]) => line(tool, f)),
      line('all tools', all),
    ]),
  );
  const c = figures.contexts;
  writeOut(
    `${figures.sessions} session(s); across the ${c.turns} turn contexts a forced replay sends: ` +
      `${formatBytes(c.bytesBefore)} → ${formatBytes(c.bytesAfter)} of tool results (${saved(c.bytesBefore, c.bytesAfter)} less)`,
  );
}
