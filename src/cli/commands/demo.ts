import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import { packageFile } from '../../paths.js';
import { UserError } from '../errors.js';
import { err, say } from '../output.js';

/**
 * The sample sessions shipped with the package (package.json "files"), found from this file so the demo works
 * from a checkout (src/ under vitest, dist/ through bin/) and from an installed package alike.
 */
export const samplesDir = packageFile(import.meta.url, 'sample-sessions');

export function demoOption(): Option {
  return new Option(
    '--demo',
    'replay the sample sessions shipped with replay-history into a store of its own under the temp directory (your store is not touched)',
  );
}

/**
 * `replay --demo`: the bundled samples as the targets, with a fresh store and pairs file in a new directory
 * under the temp dir. A new user trying the tool wants to see it work, not six sample sessions mixed into the
 * store that will hold their own history, so --db (and $REPLAY_HISTORY_DB) is never used; a new directory
 * each time means the demo runs again without --force. --out, when given, is still honoured.
 */
export function useDemo<T extends { db: string; out: string; all?: boolean }>(
  targets: string[],
  options: T,
  command: Command,
): { targets: string[]; options: T } {
  if (targets.length > 0 || options.all)
    throw new UserError('--demo replays the bundled sample sessions: drop the targets or --all');
  if (command.getOptionValueSource('db') === 'cli')
    throw new UserError(
      '--demo uses a store of its own, so your store is not touched: drop --db',
      `to put the samples in a store of yours: replay-history replay ${samplesDir} --db FILE`,
    );
  if (!existsSync(samplesDir))
    throw new UserError(
      `the sample sessions shipped with replay-history are missing (${samplesDir})`,
      'reinstall replay-history',
    );
  const dir = mkdtempSync(join(tmpdir(), 'replay-history-demo-'));
  const db = join(dir, 'replay.db');
  const out = command.getOptionValueSource('out') === 'cli' ? options.out : join(dir, 'pairs.jsonl');
  say(
    `${err.dim('demo:')} the sample sessions in ${samplesDir}, replayed into the store ${db}` +
      ` (look at it with: replay-history sessions --db ${db})`,
  );
  return { targets: [samplesDir], options: { ...options, db, out } };
}
