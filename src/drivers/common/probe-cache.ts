// Where the drivers keep what their probes proved (that an agent's deny hook is live), so a binary is probed
// once, not per replay: a JSON object in `$XDG_CACHE_HOME/replay-history/<name>`, keyed by what the proof depends
// on (the binary's path, size, mtime and version, the digest of the settings and hook it was proved with).
// A cache that cannot be read is empty; one that cannot be written costs a probe next time, nothing more.
import { mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What a proof is kept under: a rebuilt or replaced binary has another size or mtime, changed settings another
 * digest, and either is probed again. */
export function probeKey(binary: string, version: string | undefined, digest: string): string {
  const stat = statSync(binary);
  return [realpathSync(binary), stat.size, Math.round(stat.mtimeMs), version ?? '', digest].join('\0');
}

export function cacheFileOf(name: string): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'replay-history', name);
}

export function readProbeCache<Entry>(file: string): Record<string, Entry> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, Entry>)
      : {};
  } catch {
    return {};
  }
}

/** Adds one entry, written whole to a temporary file and renamed over the cache (never a half-written one). */
export function rememberProbe<Entry>(file: string, key: string, entry: Entry): void {
  const cache = readProbeCache<Entry>(file);
  cache[key] = entry;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(cache, null, 2)}\n`);
    renameSync(temp, file);
  } catch {
    // A cache that cannot be written costs a probe next time, nothing more.
  }
}
