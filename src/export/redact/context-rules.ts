// Detectors for secrets that no vendor shape gives away and that the line-anchored assignment rules miss: a token
// in a URL query (`?api_key=…`), a `password=` parameter of a connection string (JDBC, ADO.NET, libpq, ODBC,
// Azure `AccountKey=`), a secret-named variable compared with a literal (detect-secrets' keyword contexts:
// `if (api_key == "…")`), and a bare high-entropy token (pasted in a prompt, printed in an error line). The
// last one has no context at all, so it is guarded against what looks like a token and is not: hex digests and
// git SHAs, UUIDs, `sha512-…` integrity strings, base64 of text, identifiers, paths, numbers.
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
const QUERY = new RegExp(`[?&;]${QUERY_KEY}=([^&\\s"'#<>\`\\\\]{6,512})`, 'dgi');

/** `?api_key=…`, `&token=…`, `&sig=…` in any URL or request line. */
export function queryTokens(text: string, add: Add): void {
  if (!text.includes('=')) return;
  for (const m of text.matchAll(QUERY)) {
    const value = m[1] ?? '';
    const at = m.indices?.[1];
    if (!at || placeholderValue(value) || !/\d/.test(value) || shannon(value) < 3) continue;
    add(at[0], at[1], 'url_token', PRIORITY.context);
  }
}

// `Password=…;` `Pwd=…` `password=… ` `AccountKey=…` in a connection string: after `;`, `,`, `?`, `&`, a space
// or the start, up to the next separator.
const CONNECTION =
  /(?<=^|[;,?&\s"'{(])(?:password|passwd|pwd|accountkey|sharedaccesskey|sharedaccesssignature)\s*=\s*([^;,&\s"'{}()]{3,512})/dgi;

export function connectionPasswords(text: string, add: Add): void {
  if (!/pass|pwd|accountkey|sharedaccess/i.test(text)) return;
  for (const m of text.matchAll(CONNECTION)) {
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

/** `if (api_key == "…")`, `"…" !== password`: a secret-named variable compared with a literal. */
export function comparedLiterals(text: string, add: Add): void {
  if (!/[=!]==?/.test(text)) return;
  for (const m of text.matchAll(COMPARED)) {
    const group = m[2] !== undefined ? 2 : 4;
    const value = m[group] ?? '';
    const at = m.indices?.[group];
    if (!at || placeholderValue(value) || !/[A-Za-z0-9]/.test(value) || /^\s|\s$/.test(value)) continue;
    if (/^[a-z]+(?:[A-Z_-][a-z]+)*$/.test(value) && value.length < 12) continue; // an enum-like word
    add(at[0], at[1], 'config_secret', PRIORITY.assignment);
  }
}

const TOKEN = /(?<![A-Za-z0-9_\-.+/=~])[A-Za-z0-9][A-Za-z0-9_\-.+/=~]{19,254}(?![A-Za-z0-9_\-.+/=~])/g;

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
    // one letter case only: needs more digits and spread (lower-case api keys of many vendors, not words)
    if (digits < 4 || e < 3.9) return false;
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
  for (const m of text.matchAll(TOKEN)) {
    const token = m[0];
    if (!bareToken(token)) continue;
    const start = m.index ?? 0;
    add(start, start + token.replace(/[.]+$/, '').length, 'token', PRIORITY.bare);
  }
}
