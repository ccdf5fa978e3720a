// Detectors for secrets that no vendor shape gives away and that the line-anchored assignment rules miss: a token
// in a URL query (`?api_key=…`), a `password=` parameter of a connection string (JDBC, ADO.NET, libpq, ODBC,
// Azure `AccountKey=`), a secret-named variable compared with a literal (detect-secrets' keyword contexts:
// `if (api_key == "…")`), and a bare high-entropy token (pasted in a prompt, printed in an error line). The
// last one has no context at all, so it is guarded against what looks like a token and is not: hex digests and
// git SHAs, UUIDs, `sha512-…` integrity strings, base64 of text, identifiers, paths, numbers.

import { isAlnum } from '../rules.js';
import { anchored, matchesOf } from './anchored.js';
import { type Add, PRIORITY } from './finding.js';

/** Shannon entropy in bits per character. */
export function shannon(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Placeholders, templates and references that are not secrets, whatever key they stand under. */
export function placeholderValue(value: string): boolean {
  if (/^\$\{?[A-Za-z_][\w.]*\}?$|^\$\(|^\{\{.*\}\}$|^%\w+%$|^<[^>]*>$|^\[[^\]]*\]$|^%s$/.test(value))
    return true;
  if (
    /^(.)\1+$|x{4,}|X{4,}|\*{3,}|\.{3}|…|^(?:your|my)[-_ ]|[-_]here$|^(?:changeme|redacted|placeholder|example|dummy|test|none|null|true|false)$/i.test(
      value,
    )
  )
    return true;
  return /EXAMPLE|REPLACE_?ME|INSERT_|_HERE\b|[-_]your[-_]/i.test(value);
}

const QUERY_KEY =
  '(?:api[_-]?key|apikey|key|token|access[_-]?token|auth[_-]?token|auth|secret|client[_-]?secret|password|passwd|pwd|sig|signature|private[_-]?token|session[_-]?token|refresh[_-]?token|x-api-key|code)';
// after a `;` (`;password=…;encrypt=true` in a JDBC URL) a `;` ends the value; after `?` or `&` it does not (a
// connection string passed as a parameter, `&conn=Endpoint=…;Id=…;Secret=…`)
const QUERY = new RegExp(`([?&;])${QUERY_KEY}=([^&\\s"'#<>\`\\\\]{6,512})`, 'dgi');

/** `?api_key=…`, `&token=…`, `&sig=…` in any URL or request line. */
export function queryTokens(text: string, add: Add): void {
  if (!text.includes('=')) return;
  for (const m of text.matchAll(QUERY)) {
    const at = m.indices?.[2];
    if (!at) continue;
    let value = m[2] ?? '';
    if (m[1] === ';' && value.includes(';')) value = value.slice(0, value.indexOf(';'));
    if (value.length < 6 || placeholderValue(value) || !/\d/.test(value) || shannon(value) < 3) continue;
    add(at[0], at[0] + value.length, 'url_token', PRIORITY.context);
  }
}

// `Password=…;` `Pwd=…` `password=… ` `AccountKey=…` in a connection string: after `;`, `,`, `?`, `&`, a space
// or the start, up to the next separator.
const CONNECTION_BEFORE = /[;,?&\s"'{(]/;
const CONNECTION = anchored(
  /(?<=^|[;,?&\s"'{(])/.source,
  /(?:password|passwd|pwd|accountkey|sharedaccesskey|sharedaccesssignature)\s*=\s*([^;,&\s"'{}()]{3,512})/
    .source,
  'dgi',
  (text, at) => at === 0 || CONNECTION_BEFORE.test(text[at - 1] as string),
);

export function connectionPasswords(text: string, add: Add): void {
  if (!/pass|pwd|accountkey|sharedaccess/i.test(text)) return;
  for (const m of matchesOf(CONNECTION, text)) {
    const value = m[1] ?? '';
    const at = m.indices?.[1];
    if (!at || placeholderValue(value) || value.length < 4) continue;
    // `password = getPassword()`: code, not a connection string
    if (text[at[1]] === '(' || (/^[A-Za-z_.]+$/.test(value) && shannon(value) < 3.5)) continue;
    add(at[0], at[1], 'connection_password', PRIORITY.context);
  }
}

const SECRET_WORD =
  '[\\w.-]*?(?:pass(?:wd|word)?|pwd|secret[e]?|api_?key|apikey|token|private_?key|credentials?)[\\w.-]*';
const COMPARED = new RegExp(
  `(?<![\\w$])${SECRET_WORD}\\s*(?:===?|!==?)\\s*(["'\`])([^"'\`\\r\\n]{4,300})\\1|(["'\`])([^"'\`\\r\\n]{4,300})\\3\\s*(?:===?|!==?)\\s*${SECRET_WORD}(?![\\w$])`,
  'dgi',
);

const COMPARISON = /[=!]==?\s*["'`]|["'`]\s*[=!]==?/;
const SECRET_WORDS = /pass|pwd|secret|api_?key|apikey|token|private_?key|credential/i;

/** `if (api_key == "…")`, `"…" !== password`: a secret-named variable compared with a literal. */
export function comparedLiterals(text: string, add: Add): void {
  // a literal next to a comparison, and a secret word: most texts have neither, and the full pattern is slow
  if (!COMPARISON.test(text) || !SECRET_WORDS.test(text)) return;
  for (const m of text.matchAll(COMPARED)) {
    const group = m[2] !== undefined ? 2 : 4;
    const value = m[group] ?? '';
    const at = m.indices?.[group];
    if (!at || placeholderValue(value) || !/[A-Za-z0-9]/.test(value) || /^\s|\s$/.test(value)) continue;
    if (/^[a-z]+(?:[A-Z_-][a-z]+)*$/.test(value) && value.length < 12) continue; // an enum-like word
    add(at[0], at[1], 'config_secret', PRIORITY.assignment);
  }
}

/** The characters of a token: letters, digits and `_-.+/=~`. */
const TOKEN_CHAR = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.+/=~')
  TOKEN_CHAR[c.charCodeAt(0)] = 1;

/**
 * The candidate tokens of a text: each whole run of token characters 20–255 long that starts with a letter or a
 * digit, as [start, end) pairs. That is what /(?<![T])[A-Za-z0-9][T]{19,254}(?![T])/g matches (T the token
 * characters): the lookbehind puts a match at the start of a run, the lookahead at its end. A loop over the
 * characters is faster than that regex, which is tried at every character.
 */
export function tokenRuns(text: string): number[] {
  const runs: number[] = [];
  let start = -1;
  for (let i = 0, n = text.length; i <= n; i++) {
    const c = i < n ? text.charCodeAt(i) : 0;
    if (c < 128 && TOKEN_CHAR[c] === 1) {
      if (start === -1) start = i;
    } else if (start !== -1) {
      const length = i - start;
      if (length >= 20 && length <= 255 && isAlnum(text.charCodeAt(start))) runs.push(start, i);
      start = -1;
    }
  }
  return runs;
}

/** Whether a context-free string is random enough, and not one of the usual look-alikes, to be a token. */
export function bareToken(s: string): boolean {
  const core = s.replace(/[.=]+$/, '');
  if (core.length < 20) return false;
  const digits = core.replace(/\D/g, '').length;
  const lower = core.replace(/[^a-z]/g, '').length;
  const upper = core.replace(/[^A-Z]/g, '').length;
  if (digits < 2 || lower + upper < 6) return false;
  if (/^[0-9a-fA-F-]+$/.test(core)) return false; // hex: digests, SHAs, UUIDs, ids
  if (/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.test(core) && core.length < 48)
    return false;
  if (/^(?:sha|md)\d*[-:_]/i.test(core)) return false; // sha512-…, sha256:…
  if (/\.(?:[a-z]{2,5})$/i.test(core) && !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(core)) return false; // a file name
  if ((core.match(/\//g) ?? []).length >= 2 && /\/[a-z]{3,}(?:[/._-]|$)/.test(core)) return false; // a path
  if (/^\d+(?:[._-]\d+)*(?:[-._+][a-z0-9.]+)*$/i.test(core)) return false; // versions, dates
  // identifiers: a few long words with case changes or separators and few digits (`handleSubmit2FormData`);
  // random text splits into many short runs. (Counted with a global match: a nested quantifier testing the
  // same would backtrack exponentially on a miss.)
  const runs = core.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^A-Za-z0-9]/g) ?? [];
  if (digits < 4 && runs.length <= core.length / 4) return false;
  const e = shannon(core);
  if (e < (core.length >= 32 ? 4 : 3.7)) return false;
  if (upper === 0 || lower === 0) {
    // one letter case only: needs more digits and spread (lower-case api keys of many vendors, not words); a
    // short one without separators cannot spread as far (20 random base-36 characters average ~3.8 bits), while
    // `gpt-3.5-turbo-16k-0613` or `issuecomment-1332193541` are names
    const short = core.length < 24 && /^[A-Za-z0-9]+$/.test(core);
    if (digits < 4 || e < (short ? 3.7 : 3.9)) return false;
  }
  // base64 of text is decodable words, not a key
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(s) && s.length % 4 === 0) {
    const decoded = Buffer.from(s, 'base64').toString('latin1');
    if (/^[\x20-\x7e\t\r\n]+$/.test(decoded) && / [a-z]{2,}/.test(decoded)) return false;
  }
  return true;
}

/** A bare token: a random-looking string of 20+ token characters with no context (last-resort rule). */
export function bareTokens(text: string, add: Add): void {
  const runs = tokenRuns(text);
  for (let r = 0; r < runs.length; r += 2) {
    const start = runs[r] as number;
    const token = text.slice(start, runs[r + 1]);
    if (!bareToken(token)) continue;
    add(start, start + token.replace(/[.]+$/, '').length, 'token', PRIORITY.bare);
  }
}

// `invalid credentials for key …`, `token: …`, `api key is …`, `password …` in prose and log lines: a secret word
// and, right after it (a space, `:`, `=` or `is`), a value that looks random. Values of any shape count here,
// hex and UUIDs too (many vendors' keys are), since the word gives the context; the guards drop words,
// identifiers, numbers, versions, paths and file names. A URL counts only with a password in it.
const NEAR =
  /\b(?:api[_ -]?key|apikey|access[_ -]?key|key|token|secret|password|passwd|credentials?)(?:\s+is|\s*[:=])?[ \t]+["'`]?([^\s"'`,;()<>[\]{}]{8,512})/dgi;
const NEAR_WORDS = /key|token|secret|passw|credential/i;

/** Whether a value next to a secret word is random enough to be the secret (not a word, path, id or version). */
export function nearValue(raw: string): boolean {
  const value = raw.replace(/[.:!?]+$/, '');
  if (value.length < 8 || placeholderValue(value)) return false;
  if (value.includes('://')) return /^[a-z][\w+.-]*:\/\/[^\s:/@]+:[^\s/@]+@/i.test(value);
  const digits = value.replace(/\D/g, '').length;
  const letters = value.replace(/[^A-Za-z]/g, '').length;
  if (digits < 2 || letters < 2) return false;
  if (/^\d+(?:[._:-]\d+)*(?:[-._+][a-z0-9.]+)*$/i.test(value)) return false; // versions, dates, ports
  if (/[/\\]/.test(value) && /\/[a-z]{3,}(?:[/._-]|$)/.test(value)) return false; // a path
  if (/\.(?:[a-z]{2,5})$/i.test(value) && /^[\w./-]+$/.test(value) && !/\d{3}/.test(value)) return false; // a file
  if (shannon(value) < (value.length < 16 ? 2.8 : 3.2)) return false;
  const runs = value.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^A-Za-z0-9]/g) ?? [];
  if (digits < 4 && runs.length <= value.length / 4) return false; // an identifier (`user_id_v2`)
  return true;
}

/** A random-looking value right after a secret word, outside any assignment syntax (log lines, prose). */
export function nearSecretWords(text: string, add: Add): void {
  if (!NEAR_WORDS.test(text)) return;
  for (const m of text.matchAll(NEAR)) {
    const value = (m[1] ?? '').replace(/[.:!?]+$/, '');
    const at = m.indices?.[1];
    if (!at || !nearValue(value)) continue;
    // a URL's user and host go with its password (`key postgres://user:pw@host`): before the URL rule's finding
    add(
      at[0],
      at[0] + value.length,
      'token',
      value.includes('://') ? PRIORITY.context - 0.5 : PRIORITY.generic,
    );
  }
}

// A line holding one hex string and nothing else, as a paragraph of its own (a pasted key, `openssl rand -hex`,
// a file with only the key in it). Not 40 characters: that is a git SHA (`git rev-parse HEAD`); lists of hashes
// (`docker ps -q --no-trunc`) are not paragraphs of one line.
/** Where a lone hex key may start: where a paragraph does (searched for apart, in loneHexMatches). */
const LONE_HEX_PARAGRAPH = /(?<=^|\n[ \t]*\n|^[ \t]*\n)/.source;
const LONE_HEX_BODY = /[ \t]*([0-9a-fA-F]{24,128})[ \t]*(?=\r?\n[ \t]*\r?\n|\r?\n?$)/;
/** A lone hex key as one regex: what loneHexMatches finds (its definition, and the tests' oracle). */
export const LONE_HEX = new RegExp(LONE_HEX_PARAGRAPH + LONE_HEX_BODY.source, 'dg');
const LONE_HEX_AT = new RegExp(LONE_HEX_BODY.source, 'dy');
const BLANK_LINE = /\n[ \t]*\n/g;
const FIRST_LINE_BLANK = /^[ \t]*\n/;

const isHexDigit = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/**
 * What `text.matchAll(LONE_HEX)` finds, tried only where a paragraph starts (at the text's start, after a blank
 * line, after a blank first line) and where a hex digit follows the spaces there. The lookbehind first made the
 * regex try every character of every text.
 */
export function loneHexMatches(text: string): RegExpExecArray[] {
  const found: RegExpExecArray[] = [];
  let done = 0;
  const tryAt = (at: number) => {
    if (at < done) return;
    let i = at;
    while (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) i++;
    if (!isHexDigit(text.charCodeAt(i))) return;
    LONE_HEX_AT.lastIndex = at;
    const m = LONE_HEX_AT.exec(text);
    if (m) {
      done = at + m[0].length;
      found.push(m);
    }
  };
  tryAt(0);
  const first = FIRST_LINE_BLANK.exec(text);
  if (first) tryAt(first[0].length);
  BLANK_LINE.lastIndex = 0;
  for (let m = BLANK_LINE.exec(text); m !== null; m = BLANK_LINE.exec(text)) {
    const at = m.index + m[0].length;
    // the newline that ends this blank line may start the next one (`\n\n\n`)
    BLANK_LINE.lastIndex = at - 1;
    tryAt(at);
  }
  return found;
}

/** A lone hex key: its own paragraph, 24–128 hex digits with letters and digits, not a 40-digit SHA. */
export function loneHexKeys(text: string, add: Add): void {
  if (text.length > 100_000) return;
  for (const m of loneHexMatches(text)) {
    const value = m[1] ?? '';
    const at = m.indices?.[1];
    if (!at || value.length === 40) continue;
    if (!/\d.*\d/.test(value) || !/[a-f].*[a-f]/i.test(value) || shannon(value) < 3.2) continue;
    add(at[0], at[1], 'token', PRIORITY.bare);
  }
}
