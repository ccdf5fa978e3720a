import { createHash } from 'node:crypto';

export type Side = 'train' | 'validation';

/**
 * Which side of the split a session's samples go to: a hash of the seed and the session id, so every sample of a
 * session lands on the same side, the same seed gives the same split on every run, and adding sessions never moves
 * the ones already there.
 */
export function sideOf(session: string, seed: number, trainFraction: number): Side {
  const digest = createHash('sha256').update(`${seed}\0${session}`).digest();
  const point = digest.readUInt32BE(0) / 2 ** 32;
  return point < trainFraction ? 'train' : 'validation';
}

/** `data.jsonl` → `data.train.jsonl` / `data.validation.jsonl` (the extension kept, whatever it is). */
export function splitFile(file: string, side: Side): string {
  const slash = file.lastIndexOf('/');
  const dot = file.lastIndexOf('.');
  if (dot > slash + 1) return `${file.slice(0, dot)}.${side}${file.slice(dot)}`;
  return `${file}.${side}`;
}
