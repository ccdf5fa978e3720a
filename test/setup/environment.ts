// One run of the suite sees what a fresh machine (CI) sees: an empty cache of its own, not the one this
// machine's earlier runs filled. Without it, a test that passed here because the opencode tool probe was
// already cached failed on CI, where the probe ran inside it (test/e2e/opencode-secret.test.ts).
// Workers are started after this runs, so they and every process they spawn inherit it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const cache = mkdtempSync(join(tmpdir(), 'replay-history-test-cache-'));
  process.env.XDG_CACHE_HOME = cache;
  return () => rmSync(cache, { recursive: true, force: true });
}
