import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Db } from '../../store/db.js';
import { SessionStore } from '../../store/sessions.js';
import { UserError } from '../errors.js';
import { collectGarbage } from '../memory.js';
import { warn } from '../output.js';

/**
 * Session ids for the targets: a path is ingested and stands for the sessions read from it. The readers are
 * loaded only then (every adapter: most of a replay's start-up when it names stored sessions only).
 */
export async function resolveTargets(
  db: Db,
  targets: string[],
  all: boolean,
  what = 'nothing to replay',
  /** Abandoned rewind branches are taken only when asked (a named one always is). */
  options: { branches?: boolean } = {},
): Promise<string[]> {
  const sessions = new SessionStore(db);
  if (all) return sessions.allIds(options);
  if (targets.length === 0) {
    throw new UserError(
      what,
      'name sessions or log paths, or pass --all (replay-history sessions lists them)',
    );
  }
  const ids: string[] = [];
  for (const target of targets) {
    if (existsSync(target)) {
      const { ingest } = await import('../../sources/ingest.js');
      const [summary] = ingest(db, [target], { afterLargeFile: collectGarbage });
      for (const warning of summary?.warnings ?? []) {
        warn(`${warning.file}${warning.line !== undefined ? `:${warning.line}` : ''}: ${warning.message}`);
      }
      // Logs are stored under the path they were read by; a symlinked path also stands for its target.
      const found = [
        ...new Set([
          ...sessions.fromPath(resolve(target), options),
          ...sessions.fromPath(realpathSync(target), options),
        ]),
      ];
      if (found.length === 0)
        throw new UserError(`${target}: no sessions found there`, 'check the path holds agent logs');
      ids.push(...found);
    } else ids.push(sessions.resolve(target).id);
  }
  return [...new Set(ids)];
}
