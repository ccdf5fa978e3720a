// The part of redaction that depends on the text alone: every rule over every view of it (views.ts), each finding
// mapped back to the range of the text it came from. No placeholders, learned values or names: those are the
// Redactor's, in the export's order. Being a function of the text only is what lets a text be scanned on another
// thread (scan-thread.ts) and give the Redactor the same findings, in the same order, as scanning it there.

import { DETECTORS, type Finding, PRIORITY, SecretlintScanner } from '../rules.js';
import {
  bareTokens,
  comparedLiterals,
  connectionPasswords,
  loneHexKeys,
  nearSecretWords,
  placeholderValue,
  queryTokens,
} from './context-rules.js';
import { GitleaksScanner } from './gitleaks.js';
import { viewsOf } from './views.js';

/** Detectors of context-rules.ts, run after ours. */
const CONTEXT_DETECTORS = [
  queryTokens,
  connectionPasswords,
  comparedLiterals,
  nearSecretWords,
  bareTokens,
  loneHexKeys,
];

/** Our kind for a gitleaks finding: its rule id (`aws-access-token` → aws_access_token). */
const gitleaksKind = (rule: string) =>
  rule === 'generic-api-key' ? 'generic_secret' : rule.replace(/[^a-z0-9]+/g, '_');

export class Scanner {
  private readonly secretlint = new SecretlintScanner();
  private readonly gitleaks = new GitleaksScanner();

  /**
   * The findings of every rule over every view of the text (without line numbers or diff markers, unescaped,
   * URL-decoded, base64 decoded), in the order the rules make them; empty ranges left out. In a decoded blob, a
   * finding stands for the whole blob, and only secrets count (an email in a base64 JSON is left).
   */
  find(text: string): Finding[] {
    const found: Finding[] = [];
    const add = (start: number, end: number, kind: string, priority: number, pieces?: [number, number][]) => {
      if (end > start)
        found.push(pieces ? { start, end, kind, priority, pieces } : { start, end, kind, priority });
    };
    for (const view of viewsOf(text)) {
      const mapped = (start: number, end: number, kind: string, priority: number) => {
        // vendor-shaped placeholders (`ghp_xxxx…`, `…EXAMPLEKEY`, `xoxb-your-bot-token`) are documentation
        if (
          kind !== 'private_key' &&
          kind !== 'email' &&
          kind !== 'home_user' &&
          placeholderValue(view.text.slice(start, end))
        )
          return;
        if (view.text === text) return add(start, end, kind, priority);
        if (view.blob && (kind === 'email' || kind === 'home_user')) return;
        const [a, b] = view.map(start, end);
        if (view.blob || !view.text.includes('\n', start) || view.text.indexOf('\n', start) >= end)
          return add(a, b, kind, priority);
        // over several lines: replaced line by line, so that a key block read with line numbers keeps them
        // (and an escaped one its `\n`s); it still wins or loses an overlap as one finding
        const pieces: [number, number][] = [];
        for (let from = start; from < end; ) {
          const nl = view.text.indexOf('\n', from);
          const to = nl === -1 || nl >= end ? end : nl;
          if (/\S/.test(view.text.slice(from, to))) pieces.push([...view.map(from, to)]);
          from = to + 1;
        }
        add(a, b, kind, priority, pieces);
      };
      this.secretlint.scan(view.text, mapped);
      for (const detect of DETECTORS) detect(view.text, mapped);
      for (const detect of CONTEXT_DETECTORS) detect(view.text, mapped);
      for (const f of this.gitleaks.scan(view.text))
        mapped(
          f.start,
          f.end,
          gitleaksKind(f.rule),
          f.rule === 'generic-api-key' ? PRIORITY.generic : PRIORITY.gitleaks,
        );
    }
    return found;
  }
}
