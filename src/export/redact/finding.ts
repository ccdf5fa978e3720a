// What a detector reports (shared by rules.ts and the detectors under redact/): a range to replace, the kind of
// secret, and which finding wins an overlap.

/** What to replace: [start, end) of the text, the kind of secret, and which finding wins an overlap (lower). */
export interface Finding {
  start: number;
  end: number;
  kind: string;
  priority: number;
  /** what to replace, when not the whole range: the lines of a finding made in a view without line numbers */
  pieces?: [number, number][];
}

export type Add = (start: number, end: number, kind: string, priority: number) => void;

/**
 * Overlap order: a private key block beats a token inside it, a vendor token beats the assignment around it, etc.
 * gitleaks' rules come after our vendor and context rules (ours name the kinds the goldens show), its generic one after our
 * assignments; a bare high-entropy token is the last resort before emails and home paths.
 */
export const PRIORITY = {
  privateKey: 0,
  vendor: 1,
  gitleaks: 2.5,
  context: 2,
  assignment: 3,
  generic: 3.5,
  known: 4,
  bare: 4.5,
  email: 5,
  home: 6,
  /** a learned person's name (redact/names.ts): last, so an email or a home path around it stays one */
  person: 6.5,
} as const;
