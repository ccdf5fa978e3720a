// Normalised views of a text, so that rules written for plain files also see what an agent log wraps: the line
// numbers a read tool prefixes (Claude Code `Read`: `     12→`, `cat -n`: `    12\t`, opencode: `00012| `),
// `git diff` markers, JSON string escapes (a PEM key inside a JSON string, once or twice escaped), URL-encoding,
// and base64 blobs that hold credentials (docker `auth`, kubeconfig `*-data`, `.npmrc` `_auth`, Basic auth, a
// Kubernetes Secret's values), as gitleaks decodes with --max-decode-depth. Each view keeps, per character, its
// position in the original, so a finding in a view maps back to the range of the original to replace.

export interface View {
  text: string;
  /** [start, end) of the original text for [start, end) of the view */
  map(start: number, end: number): readonly [number, number];
  /** a decoded base64 blob: every range maps to the whole blob */
  blob?: boolean;
}

/** A view built character by character with each one's original position. */
class Builder {
  text = '';
  private readonly at: number[] = [];
  private readonly ends: number[] = [];

  push(chars: string, start: number, end: number): void {
    for (let i = 0; i < chars.length; i++) {
      this.at.push(start);
      this.ends.push(end);
    }
    this.text += chars;
  }

  view(parent: View | undefined): View {
    const { at, ends, text } = this;
    const own = (s: number, e: number) => [at[s] ?? 0, ends[e - 1] ?? at[s] ?? 0] as const;
    return {
      text,
      map: parent
        ? (s, e) => {
            const [a, b] = own(s, e);
            return [parent.map(a, b)[0], parent.map(a, b)[1]];
          }
        : own,
    };
  }
}

const identity = (text: string): View => ({ text, map: (s, e) => [s, e] });

// `     12→` (Claude Code Read), `    12\t` (cat -n), `00012| ` (opencode read), `L12: ` is not used by any agent
const LINE_NUMBER = /^(?: {0,8}\d{1,7}→| {0,8}\d{1,7}\t|\d{5}\| )/;
const HAS_LINE_NUMBERS = /(?:^|\n) {0,8}\d{1,7}(?:→|\t)|(?:^|\n)\d{5}\| /;
const DIFF = /(?:^|\n)(?:diff --git |@@ -\d)/;

/** The text without line-number prefixes and diff markers, if it has any (else undefined). */
function stripped(text: string): View | undefined {
  const numbered = HAS_LINE_NUMBERS.test(text);
  const diff = DIFF.test(text);
  if (!numbered && !diff) return undefined;
  const b = new Builder();
  let pos = 0;
  while (pos <= text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl === -1 ? text.length : nl;
    let from = pos;
    const line = text.slice(pos, end);
    if (numbered) {
      const m = LINE_NUMBER.exec(line);
      if (m) from += m[0].length;
    }
    if (
      diff &&
      /^[+\- ](?![+-]{2} )/.test(text.slice(from, end)) &&
      !/^(?:\+\+\+|---) /.test(text.slice(from, end))
    )
      from++;
    for (let i = from; i < end; i++) b.push(text[i] as string, i, i + 1);
    if (nl === -1) break;
    b.push('\n', nl, nl + 1);
    pos = nl + 1;
  }
  return b.view(undefined);
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  r: '\r',
  t: '\t',
  '"': '"',
  "'": "'",
  '\\': '\\',
  '/': '/',
};

/** JSON (and shell) string escapes undone: `\n` → line break, `\"` → `"`, `\\` → `\`, `\u002B` → `+`. */
function unescaped(view: View): View | undefined {
  const text = view.text;
  if (!/\\[nrt"\\u]/.test(text)) return undefined;
  const b = new Builder();
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      const n = text[i + 1] as string;
      if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        b.push(String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16)), i, i + 6);
        i += 5;
        continue;
      }
      const e = ESCAPES[n];
      if (e !== undefined) {
        b.push(e, i, i + 2);
        i++;
        continue;
      }
    }
    b.push(c, i, i + 1);
  }
  return b.view(view);
}

/** `%XX` sequences of printable ASCII decoded (a token in a query string, a password in a URL). */
function urlDecoded(view: View): View | undefined {
  const text = view.text;
  if (!/%[2-7][0-9A-Fa-f]/.test(text)) return undefined;
  const b = new Builder();
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '%' && /^[2-7][0-9A-Fa-f]$/.test(text.slice(i + 1, i + 3))) {
      b.push(String.fromCharCode(Number.parseInt(text.slice(i + 1, i + 3), 16)), i, i + 3);
      i += 2;
      continue;
    }
    b.push(text[i] as string, i, i + 1);
  }
  return b.view(view);
}

const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])/g;
/** Texts longer than this are not searched for base64 blobs (images, bundles: nothing to decode there). */
const MAX_DECODE_TEXT = 2_000_000;
const MAX_BLOB = 65_536;

/** Decoded base64 blobs that are text (credentials, a PEM, an `.env`), each mapped to its whole blob. */
function decodedBlobs(view: View, depth: number): View[] {
  const out: View[] = [];
  const text = view.text;
  if (text.length > MAX_DECODE_TEXT) return out;
  for (const m of text.matchAll(BASE64_RUN)) {
    const blob = m[0];
    if (blob.length > MAX_BLOB || !/[A-Z]/.test(blob) || !/[a-z]/.test(blob)) continue;
    const decoded = Buffer.from(
      blob,
      blob.includes('-') || blob.includes('_') ? 'base64url' : 'base64',
    ).toString('latin1');
    if (decoded.length < 8 || !/^[\x20-\x7e\t\r\n]*$/.test(decoded)) continue;
    // credentials or config: `user:password`, `KEY=value`, `key: value`, a PEM block, JSON
    if (!/[:=]|-----BEGIN|^\s*[{[]/.test(decoded)) continue;
    const start = m.index ?? 0;
    const [a, b] = view.map(start, start + blob.length);
    const blobView: View = { text: decoded, map: () => [a, b], blob: true };
    out.push(blobView);
    if (depth > 1) out.push(...decodedBlobs(blobView, depth - 1));
  }
  return out;
}

/**
 * The views of a text to run the rules on, the text itself first (or, if it has line numbers or diff markers,
 * the text without them instead: nothing is lost, since the prefixes hold no secret). Most texts have none of
 * the marks and get only themselves.
 */
export function viewsOf(text: string): View[] {
  const base = stripped(text) ?? identity(text);
  const views: View[] = [base];
  let current = base;
  // twice: a JSON string inside a JSON string (`\\n` in a log of a request body)
  for (let depth = 0; depth < 2; depth++) {
    const next = unescaped(current);
    if (!next) break;
    views.push(next);
    current = next;
  }
  const decoded = urlDecoded(current);
  if (decoded) views.push(decoded);
  if (text.length >= 16) views.push(...decodedBlobs(current, 2));
  return views;
}
