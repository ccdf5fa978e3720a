// Patterns whose leading lookbehind is checked in code. A regex that begins with a lookbehind (`(?<=^|[\s"'])--flag`,
// `(?<=^|[;,?&\s"'{(])password=…`) is tried at every character of the text: irregexp cannot skip ahead to what
// the match must start with. Without it, the engine finds the few candidates quickly and a one-character test
// stands for the assertion. Exact: a candidate that fails the test resumes the search one character later, as
// the lookbehind's failure would have (test/export/redact-anchored.test.ts compares both on the redaction corpus).
// Only where the rest of the pattern starts with something rare (`--`, `password`): where
// the lookbehind is what stops a lazy identifier at once inside every word (`(?<![\w$])` before `key: "…"`), it
// is cheaper than the candidates it would let through and stays in the regex (measured: 170 → 300 ms without).
// Nor where the rest can scan far from a start the lookbehind rejected: every position of a long run then starts
// a scan of the rest of the run, quadratic (the inline env rule, `[A-Z][A-Z0-9_]*_…`, took 15 s on one line).

export interface Anchored {
  /** The lookbehind the check stands for, as regex source: what the pattern means (and the tests' oracle). */
  readonly lookbehind: string;
  readonly source: string;
  readonly flags: string;
  /** The pattern without its lookbehind (global). */
  readonly pattern: RegExp;
  /** Whether the lookbehind holds at `at`. */
  readonly before: (text: string, at: number) => boolean;
}

/** Every anchored pattern made, for the tests that compare each with its lookbehind form. */
export const ANCHORED: Anchored[] = [];

export function anchored(
  lookbehind: string,
  source: string,
  flags: string,
  before: (text: string, at: number) => boolean,
): Anchored {
  if (!flags.includes('g')) throw new Error('an anchored pattern is searched globally');
  const made = { lookbehind, source, flags, pattern: new RegExp(source, flags), before };
  ANCHORED.push(made);
  return made;
}

/** The matches of the pattern in the text where its lookbehind holds, in order, as `matchAll` of both gives. */
export function* matchesOf(a: Anchored, text: string): Generator<RegExpExecArray> {
  const { pattern, before } = a;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const at = m.index;
    // after an empty match the search moves on by one, as matchAll's does
    const next = m[0] === '' ? at + 1 : pattern.lastIndex;
    if (!before(text, at)) {
      pattern.lastIndex = at + 1;
      continue;
    }
    yield m;
    // the consumer may have run the same pattern meanwhile
    pattern.lastIndex = next;
  }
}
