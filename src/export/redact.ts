// Redaction of secrets and personal data in exported samples: one Redactor per export run, so that the same
// secret gets the same placeholder in every sample. Synchronous (the detectors are; see rules.ts). The store is
// never touched: the pipeline redacts copies (clean.ts), and the real → placeholder map lives only in memory.
//
// Placeholders: `[REDACTED_<KIND>_<n>]`, numbered per kind in order of first appearance (`[REDACTED_EMAIL_2]` is
// the second distinct email of the export). They hold no quote or backslash, so they are safe inside JSON
// strings and inside JSON-escaped text. Exception: the user name in a home path becomes `user_<n>`
// (`/home/user_1/src/app.ts`), so the path still reads as a path. Emails are matched case-insensitively.
//
// People's names (redact/names.ts) are learned in a first pass over the export (`learnNames`, before any row) and
// become `[REDACTED_PERSON_<n>]`, one number per person, in every text.
//
// Values found by a context rule (an `.env` line, a URL password, a bearer token…) are also replaced where they
// appear later without that context (`echo hunter2pass`), if they cannot be an ordinary word (see propagatable).

import { Names } from './redact/names.js';
import { Scanner } from './redact/scanner.js';
import { type Finding, PRIORITY, propagatable, secretUnderKey } from './rules.js';

/** Where the rules' findings of texts are shared with the threads that scan ahead (scan-thread.ts). */
export interface Scans {
  /** the findings of a text, if a thread (or this one) has scanned it */
  get(text: string): readonly Finding[] | undefined;
  /** findings made here, for the later samples that hold the same text */
  put(text: string, found: readonly Finding[]): void;
}

/** Kinds whose values are learned and then replaced wherever they appear, context or not. */
const LEARNED = new Set([
  'env_secret',
  'config_secret',
  'url_password',
  'bearer_token',
  'auth_header',
  'aws_secret_key',
  'generic_secret',
  'connection_password',
  'url_token',
]);
/** Beyond this many learned values, no new ones are learned (the search is one alternation of them all). */
const MAX_LEARNED = 5000;

/** Texts at least this long are remembered with their redaction: with `--unit model-turn` every sample repeats
 * the conversation so far, so the same tool outputs come back once per later turn. */
const CACHE_MIN_CHARS = 256;
/** Bound on the remembered texts and their redactions together (UTF-16 code units; least recently used go). */
const CACHE_MAX_CHARS = 16_000_000;

interface Placeholder {
  kind: string;
  text: string;
}

interface CacheEntry {
  out: string;
  /** replacements per kind made in this text, added again on each hit */
  counted: [string, number][];
  /** how many values were learned when it was redacted */
  learned: number;
}

/** Non-overlapping findings: by priority, then position, then length; sorted by position. */
function resolve(found: Finding[]): Finding[] {
  found.sort((a, b) => a.priority - b.priority || a.start - b.start || b.end - b.start - (a.end - a.start));
  const chosen: Finding[] = [];
  for (const f of found) {
    // first chosen finding starting at or after f.start
    let lo = 0;
    let hi = chosen.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((chosen[mid] as Finding).start < f.start) lo = mid + 1;
      else hi = mid;
    }
    const before = chosen[lo - 1];
    const after = chosen[lo];
    if ((before && before.end > f.start) || (after && after.start < f.end)) continue;
    chosen.splice(lo, 0, f);
  }
  return chosen;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

export class Redactor {
  /** People's names (redact/names.ts): given ones, and those `learnNames` finds in a first pass over the export. */
  readonly names: Names;
  private namesVersion = 0;
  private readonly scanner = new Scanner();
  private scans: Scans | undefined;
  /** secret (emails lower-cased) → its placeholder */
  private readonly placeholders = new Map<string, Placeholder>();
  /** home-path user name → user_<n> */
  private readonly users = new Map<string, string>();
  private readonly next = new Map<string, number>();
  private readonly tally: Record<string, number> = {};
  /** values learned from context rules → the kind they were found as */
  private readonly learned = new Map<string, string>();
  private learnedPattern: RegExp | undefined;
  private readonly cache = new Map<string, CacheEntry>();
  private cachedChars = 0;

  constructor(options: { names?: readonly string[] } = {}) {
    this.names = new Names(options.names);
  }

  /** Learns the people's names in a JSON-like value (a session's messages, a pair): before any row is redacted. */
  learnNames(value: unknown): void {
    this.names.learn(value);
  }

  /** The text with every secret, email and home-path user name replaced by its placeholder. */
  redactText(text: string): string {
    if (text === '') return text;
    if (this.names.version !== this.namesVersion) {
      // a name learned after a text was redacted: what was remembered may hold it
      this.namesVersion = this.names.version;
      this.cache.clear();
      this.cachedChars = 0;
    }
    const cacheable = text.length >= CACHE_MIN_CHARS;
    if (cacheable) {
      const hit = this.cache.get(text);
      // valid while nothing new was learned (a learned value could now be found in it)
      if (hit && hit.learned === this.learned.size) {
        this.cache.delete(text);
        this.cache.set(text, hit);
        for (const [kind, n] of hit.counted) this.tally[kind] = (this.tally[kind] ?? 0) + n;
        return hit.out;
      }
    }
    const counted = new Map<string, number>();
    const out = this.redact(text, counted);
    for (const [kind, n] of counted) this.tally[kind] = (this.tally[kind] ?? 0) + n;
    if (cacheable) this.remember(text, { out, counted: [...counted], learned: this.learned.size });
    return out;
  }

  /**
   * A deep copy of a JSON-like value (tool-call arguments) with every string redacted. Object keys go through
   * the same rules: a parameter name never matches one, so argument shapes stay as they were, while keys that
   * are data (a path, an email, a token used as a map key) are redacted like any other text. A key also gives
   * its value context: a string under a secret-named key (`{"env": {"DB_PASSWORD": "hunter2"}}`, `"apiKey"`) is
   * replaced whole when the rules find nothing in it by themselves and it looks like a value, not a reference.
   * Non-string scalars are kept; the input is not modified.
   */
  redactValue(value: unknown): unknown {
    return this.value(value, undefined);
  }

  /** Replacements made so far, per kind (every occurrence counts), keys sorted. */
  counts(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.tally).sort(([a], [b]) => a.localeCompare(b)));
  }

  /**
   * Where the rules' findings of a text may come from instead of scanning it here (scan-thread.ts: the same
   * Scanner on another thread, so the same findings in the same order); undefined: scanned here.
   */
  useScans(scans: Scans | undefined): void {
    this.scans = scans;
  }

  private value(value: unknown, key: string | undefined): unknown {
    if (typeof value === 'string') {
      const redacted = this.redactText(value);
      if (redacted === value && key !== undefined && secretUnderKey(key, value)) {
        this.learnOne(value, 'config_secret');
        const placeholder = this.placeholder('config_secret', value);
        this.tally[placeholder.kind] = (this.tally[placeholder.kind] ?? 0) + 1;
        return placeholder.text;
      }
      return redacted;
    }
    if (Array.isArray(value)) return value.map((item) => this.value(item, undefined));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        let name = this.redactText(k);
        // two keys redacted to the same text (one email in two spellings): keep both
        for (let i = 2; Object.hasOwn(out, name); i++) name = `${this.redactText(k)}_${i}`;
        out[name] = this.value(v, k);
      }
      return out;
    }
    return value;
  }

  private redact(text: string, counted: Map<string, number>): string {
    // the rules' findings (a copy: resolve sorts this list), then ours
    let rules = this.scans?.get(text);
    if (rules === undefined) {
      rules = this.scanner.find(text);
      this.scans?.put(text, rules);
    }
    const found: Finding[] = [...rules];
    const add = (start: number, end: number, kind: string, priority: number) => {
      if (end > start) found.push({ start, end, kind, priority });
    };
    this.findLearned(text, add);
    this.names.find(text, add);
    if (found.length === 0) return text;

    let chosen = resolve(found);
    // A value learned from this very text (`PASSWORD=x` … `echo x`): look again for its bare occurrences.
    if (this.learn(text, chosen)) {
      this.findLearned(text, add);
      chosen = resolve(found);
    }
    let out = '';
    let last = 0;
    for (const f of chosen)
      for (const [start, end] of f.pieces ?? [[f.start, f.end]]) {
        const placeholder = this.placeholder(f.kind, text.slice(start, end));
        // counted under the placeholder's kind, so the report matches what the output shows
        counted.set(placeholder.kind, (counted.get(placeholder.kind) ?? 0) + 1);
        out += text.slice(last, start) + placeholder.text;
        last = end;
      }
    return out + text.slice(last);
  }

  private remember(text: string, entry: CacheEntry): void {
    const stale = this.cache.get(text);
    if (stale) this.cachedChars -= text.length + stale.out.length;
    this.cache.delete(text);
    this.cache.set(text, entry);
    this.cachedChars += text.length + entry.out.length;
    for (const [old, e] of this.cache) {
      if (this.cachedChars <= CACHE_MAX_CHARS) break;
      this.cache.delete(old);
      this.cachedChars -= old.length + e.out.length;
    }
  }

  /** The placeholder of a secret: its own if it was seen before, else the next number of its kind. */
  private placeholder(kind: string, secret: string): Placeholder {
    if (kind === 'person') return { kind, text: this.names.placeholder(secret) };
    if (kind === 'home_user') {
      let user = this.users.get(secret);
      if (user === undefined) {
        user = `user_${this.users.size + 1}`;
        this.users.set(secret, user);
      }
      return { kind, text: user };
    }
    const key = kind === 'email' ? secret.toLowerCase() : secret;
    let entry = this.placeholders.get(key);
    if (entry === undefined) {
      const n = (this.next.get(kind) ?? 0) + 1;
      this.next.set(kind, n);
      entry = { kind, text: `[REDACTED_${kind.toUpperCase()}_${n}]` };
      this.placeholders.set(key, entry);
    }
    return entry;
  }

  /** Learns the values of the chosen context findings; true if any is new. */
  private learn(text: string, chosen: readonly Finding[]): boolean {
    let added = false;
    for (const f of chosen)
      if (LEARNED.has(f.kind))
        for (const [start, end] of f.pieces ?? [[f.start, f.end]])
          added = this.learnOne(text.slice(start, end), f.kind) || added;
    return added;
  }

  private learnOne(secret: string, kind: string): boolean {
    if (this.learned.size >= MAX_LEARNED || this.learned.has(secret) || !propagatable(secret)) return false;
    this.learned.set(secret, kind);
    this.learnedPattern = undefined;
    return true;
  }

  private findLearned(
    text: string,
    add: (start: number, end: number, kind: string, priority: number) => void,
  ) {
    if (this.learned.size === 0) return;
    if (this.learnedPattern === undefined) {
      const alternatives = [...this.learned.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
      this.learnedPattern = new RegExp(`(?<![A-Za-z0-9])(?:${alternatives.join('|')})(?![A-Za-z0-9])`, 'g');
    }
    for (const m of text.matchAll(this.learnedPattern)) {
      const start = m.index ?? 0;
      const kind = this.placeholders.get(m[0])?.kind ?? this.learned.get(m[0]) ?? 'config_secret';
      add(start, start + m[0].length, kind, PRIORITY.known);
    }
  }
}
