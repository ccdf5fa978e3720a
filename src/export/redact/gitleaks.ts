// gitleaks' default rules (ported as data in gitleaks-rules.ts) applied the way gitleaks applies them: a rule runs
// only if the text holds one of its keywords; its secret is the first non-empty capture group (or the match);
// a secret at or below the rule's entropy threshold is dropped, as is one the global or the rule's allowlists
// allow (regexes on the secret, the match or the line; stopwords contained in the secret).
import { GITLEAKS_GLOBAL_ALLOWLIST, GITLEAKS_RULES } from './gitleaks-rules.js';
import { KeywordSet } from './keywords.js';

export interface GitleaksAllowlist {
  target: 'secret' | 'match' | 'line';
  regexes: readonly string[];
  stopwords: readonly string[];
}

export interface GitleaksRule {
  id: string;
  /** JavaScript regex source, to be compiled without flags */
  source: string;
  /** the identifier prefix dropped from the regex: how far back (in [\w.-]) the match starts */
  lead?: number;
  keywords: readonly string[];
  entropy?: number;
  group?: number;
  allow: readonly GitleaksAllowlist[];
}

export interface GitleaksFinding {
  rule: string;
  start: number;
  end: number;
}

interface Compiled {
  rule: GitleaksRule;
  regex: RegExp;
  allow: { target: GitleaksAllowlist['target']; regexes: RegExp[]; stopwords: readonly string[] }[];
}

/** Shannon entropy in bits per character, as gitleaks computes it (over bytes; our secrets are ASCII). */
function shannon(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const compileAllow = (a: GitleaksAllowlist) => ({
  target: a.target,
  regexes: a.regexes.map((r) => new RegExp(r)),
  stopwords: a.stopwords,
});

const isIdent = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || c === 45;

/** The line of text around [start, end). */
function lineAround(text: string, start: number, end: number): string {
  const from = text.lastIndexOf('\n', start - 1) + 1;
  const to = text.indexOf('\n', end);
  return text.slice(from, to === -1 ? text.length : to);
}

export class GitleaksScanner {
  private readonly rules: Compiled[];
  private readonly keywords: KeywordSet;
  /** keyword index → the rules it enables */
  private readonly byKeyword: number[][];
  /** rules without keywords run on every text */
  private readonly always: number[];
  private readonly global = compileAllow(GITLEAKS_GLOBAL_ALLOWLIST);

  constructor(skip: ReadonlySet<string> = new Set()) {
    this.rules = GITLEAKS_RULES.filter((r) => !skip.has(r.id)).map((rule) => ({
      rule,
      regex: new RegExp(rule.source, 'dg'),
      allow: rule.allow.map(compileAllow),
    }));
    const words: string[] = [];
    const index = new Map<string, number>();
    this.byKeyword = [];
    this.always = [];
    this.rules.forEach((c, i) => {
      if (c.rule.keywords.length === 0) this.always.push(i);
      for (const k of c.rule.keywords) {
        let at = index.get(k);
        if (at === undefined) {
          at = words.length;
          index.set(k, at);
          words.push(k);
          this.byKeyword.push([]);
        }
        (this.byKeyword[at] as number[]).push(i);
      }
    });
    this.keywords = new KeywordSet(words);
  }

  /** Every finding of every rule whose keywords the text holds. */
  scan(text: string): GitleaksFinding[] {
    const selected = new Set<number>(this.always);
    for (const k of this.keywords.found(text)) for (const r of this.byKeyword[k] as number[]) selected.add(r);
    const findings: GitleaksFinding[] = [];
    for (const i of selected) this.run(this.rules[i] as Compiled, text, findings);
    return findings;
  }

  private run(c: Compiled, text: string, findings: GitleaksFinding[]): void {
    c.regex.lastIndex = 0;
    for (const m of text.matchAll(c.regex)) {
      let start = m.index ?? 0;
      const end = start + m[0].length;
      if (c.rule.lead) {
        const floor = Math.max(0, start - c.rule.lead);
        while (start > floor && isIdent(text.charCodeAt(start - 1))) start--;
      }
      const match = text.slice(start, end);
      let group = c.rule.group ?? 0;
      if (group === 0) for (let g = 1; g < m.length && group === 0; g++) if (m[g]) group = g;
      const span = group > 0 ? m.indices?.[group] : [m.index ?? 0, end];
      if (!span) continue;
      const secret = text.slice(span[0], span[1]).replace(/^\n+|\n+$/g, '');
      if (secret === '') continue;
      if (c.rule.entropy !== undefined && shannon(secret) <= c.rule.entropy) continue;
      const line = () => lineAround(text, start, end);
      if (
        this.allowed(this.global, secret, match, line) ||
        c.allow.some((a) => this.allowed(a, secret, match, line))
      )
        continue;
      const at = text.indexOf(secret, span[0]);
      findings.push({ rule: c.rule.id, start: at, end: at + secret.length });
    }
  }

  private allowed(
    a: { target: string; regexes: RegExp[]; stopwords: readonly string[] },
    secret: string,
    match: string,
    line: () => string,
  ): boolean {
    if (a.regexes.length > 0) {
      const target = a.target === 'match' ? match : a.target === 'line' ? line() : secret;
      if (a.regexes.some((r) => r.test(target))) return true;
    }
    if (a.stopwords.length > 0) {
      const lower = secret.toLowerCase();
      if (a.stopwords.some((w) => lower.includes(w))) return true;
    }
    return false;
  }
}
