// Two runs over the same sessions, turn by turn: a baseline (A) and a candidate (B). A turn is better where its
// tool calls come closer to the original's (exact, then normalized, then differing; a failed turn is worst),
// then where it made fewer calls the recording lacks; where neither the original nor either run made a call, by
// how close its text is to the original answer (word-bigram Dice similarity, a change under `textMargin` not
// counted). Pure: the turns and the original texts come in, the verdicts go out.
import type { TurnRow } from '../store/runs.js';

export type Outcome = 'improved' | 'regressed' | 'same' | 'only-a' | 'only-b';

export interface TurnComparison {
  turn: number;
  outcome: Outcome;
  /** How each run did: `exact`, `normalized`, `differs`, `none` (no calls), `failed`. */
  a?: string;
  b?: string;
  /** Text similarity to the original answer (0–1), where the turn is judged by its text. */
  textA?: number;
  textB?: number;
  missesA?: number;
  missesB?: number;
}

export interface SessionComparison {
  sessionId: string;
  improved: number;
  regressed: number;
  same: number;
  /** Turns only one of the runs answered or asked. */
  onlyA: number;
  onlyB: number;
  turns: TurnComparison[];
}

/** A text change smaller than this is noise, not an improvement or a regression. */
export const textMargin = 0.1;

const rank = (row: TurnRow): number => {
  if (row.status === 'failed') return 0;
  switch (row.match) {
    case 'exact':
      return 3;
    case 'normalized':
      return 2;
    case 'differs':
      return 1;
    default:
      return -1;
  }
};

const label = (row: TurnRow): string => (row.status === 'failed' ? 'failed' : (row.match ?? 'none'));

/** The answer's text (the completion's content), '' for none. */
export function answerText(row: TurnRow): string {
  if (!row.response) return '';
  try {
    const content = (JSON.parse(row.response) as { content?: unknown }).content;
    return typeof content === 'string' ? content : '';
  } catch {
    return '';
  }
}

function bigrams(text: string): Map<string, number> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const out = new Map<string, number>();
  const units = words.length === 1 ? words : words.slice(1).map((word, i) => `${words[i]} ${word}`);
  for (const unit of units) out.set(unit, (out.get(unit) ?? 0) + 1);
  return out;
}

/** Dice coefficient of the two texts' word bigrams: 1 the same words in the same order, 0 nothing shared. */
export function similarity(left: string, right: string): number {
  const a = bigrams(left);
  const b = bigrams(right);
  const size = (map: Map<string, number>) => [...map.values()].reduce((n, v) => n + v, 0);
  const total = size(a) + size(b);
  if (total === 0) return left.trim() === right.trim() ? 1 : 0;
  let shared = 0;
  for (const [unit, count] of a) shared += Math.min(count, b.get(unit) ?? 0);
  return (2 * shared) / total;
}

/** One turn of both runs (either may be missing), and the original answer's text. */
export function compareTurn(
  turn: number,
  a: TurnRow | undefined,
  b: TurnRow | undefined,
  original: string | undefined,
): TurnComparison {
  if (!a || !b)
    return {
      turn,
      outcome: a ? 'only-a' : 'only-b',
      ...(a ? { a: label(a) } : {}),
      ...(b ? { b: label(b) } : {}),
    };
  const base: TurnComparison = { turn, outcome: 'same', a: label(a), b: label(b) };
  if (a.misses > 0 || b.misses > 0) Object.assign(base, { missesA: a.misses, missesB: b.misses });
  const ra = rank(a);
  const rb = rank(b);
  // Neither made a call and the original made none: the text decides.
  if (ra === -1 && rb === -1) {
    if (original === undefined) return base;
    const textA = similarity(answerText(a), original);
    const textB = similarity(answerText(b), original);
    const outcome =
      textB - textA > textMargin ? 'improved' : textA - textB > textMargin ? 'regressed' : 'same';
    return { ...base, outcome, textA, textB };
  }
  // A turn without calls where calls were due ranks as differing: it did not make them.
  const ca = ra === -1 ? 1 : ra;
  const cb = rb === -1 ? 1 : rb;
  if (cb !== ca) return { ...base, outcome: cb > ca ? 'improved' : 'regressed' };
  if (b.misses !== a.misses) return { ...base, outcome: b.misses < a.misses ? 'improved' : 'regressed' };
  return base;
}

/** A session's turns in both runs, `original(turn)` the recorded answer's text of a turn. */
export function compareSession(
  sessionId: string,
  a: readonly TurnRow[],
  b: readonly TurnRow[],
  original: (turn: number) => string | undefined,
): SessionComparison {
  const byTurn = (rows: readonly TurnRow[]) => new Map(rows.map((row) => [row.turn, row]));
  const left = byTurn(a);
  const right = byTurn(b);
  const numbers = [...new Set([...left.keys(), ...right.keys()])].sort((x, y) => x - y);
  const turns = numbers.map((turn) => compareTurn(turn, left.get(turn), right.get(turn), original(turn)));
  const count = (outcome: Outcome) => turns.filter((turn) => turn.outcome === outcome).length;
  return {
    sessionId,
    improved: count('improved'),
    regressed: count('regressed'),
    same: count('same'),
    onlyA: count('only-a'),
    onlyB: count('only-b'),
    turns,
  };
}
