// Normalised views of a text, so that rules written for plain files also see what an agent log wraps: the line
// numbers a read tool prefixes (Claude Code `Read`: `     12→`, `cat -n`: `    12\t`, opencode: `00012| `),
// `git diff` markers, JSON string escapes (a PEM key inside a JSON string, once or twice escaped), URL-encoding,
// and base64 blobs that hold credentials (docker `auth`, kubeconfig `*-data`, `.npmrc` `_auth`, Basic auth, a
// Kubernetes Secret's values), as gitleaks decodes with --max-decode-depth. Each view keeps where its runs of
// text come from in the original, so a finding in a view maps back to the range of the original to replace.

export interface View {
  text: string;
  /** [start, end) of the original text for [start, end) of the view */
  map(start: number, end: number): readonly [number, number];
  /** a decoded base64 blob: every range maps to the whole blob */
  blob?: boolean;
}

/**
 * A view built from runs of the original: `copy` appends a slice that maps one to one, `put` appends text that
 * stands for a range (an escape, a decoded `%XX`). Positions are kept per run, not per character, so building
 * a view of a long text costs a few slices, and mapping a range back is a binary search over the runs.
 */
class Builder {
  private readonly parts: string[] = [];
  private length = 0;
  /** per run: where it starts in the view, where it comes from in the original, and whether it maps 1:1 */
  private readonly viewAt: number[] = [];
  private readonly from: number[] = [];
  private readonly to: number[] = [];
  private readonly exact: boolean[] = [];

  /** `source.slice(start, end)`, each character mapping to its own position. */
  copy(source: string, start: number, end: number): void {
    if (end <= start) return;
    const last = this.exact.length - 1;
    if (last >= 0 && this.exact[last] && this.to[last] === start) this.to[last] = end;
    else this.run(start, end, true);
    this.parts.push(source.slice(start, end));
    this.length += end - start;
  }

  /** `chars`, every one of them mapping to the original range [start, end). */
  put(chars: string, start: number, end: number): void {
    if (chars === '') return;
    this.run(start, end, false);
    this.parts.push(chars);
    this.length += chars.length;
  }

  private run(start: number, end: number, exact: boolean): void {
    this.viewAt.push(this.length);
    this.from.push(start);
    this.to.push(end);
    this.exact.push(exact);
  }

  view(parent: View | undefined): View {
    const { viewAt, from, to, exact } = this;
    const text = this.parts.join('');
    const runOf = (p: number) => {
      let lo = 0;
      let hi = viewAt.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if ((viewAt[mid] as number) <= p) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const startOf = (p: number) => {
      if (viewAt.length === 0) return 0;
      const r = runOf(p);
      return exact[r]
        ? Math.min((from[r] as number) + p - (viewAt[r] as number), to[r] as number)
        : (from[r] as number);
    };
    const endOf = (p: number) => {
      if (viewAt.length === 0) return 0;
      const r = runOf(p);
      return exact[r] ? (from[r] as number) + p - (viewAt[r] as number) + 1 : (to[r] as number);
    };
    const own = (s: number, e: number) => [startOf(s), e > s ? endOf(e - 1) : startOf(s)] as const;
    return {
      text,
      map: parent
        ? (s, e) => {
            const [a, b] = own(s, e);
            return parent.map(a, b);
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
    b.copy(text, from, end);
    if (nl === -1) break;
    b.copy(text, nl, nl + 1);
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

/**
 * The lines of a text that hold a match of `mark` (a global regex), as [start, end) ranges without their line
 * break, merged when adjacent. A decoded view is made of these lines only: the other lines read the same in it
 * as in its parent, so the rules would find nothing new there.
 */
function linesWith(text: string, mark: RegExp): [number, number][] {
  const out: [number, number][] = [];
  mark.lastIndex = 0;
  for (let m = mark.exec(text); m !== null; m = mark.exec(text)) {
    const start = text.lastIndexOf('\n', m.index) + 1;
    const nl = text.indexOf('\n', m.index + m[0].length);
    const end = nl === -1 ? text.length : nl;
    const last = out[out.length - 1];
    if (last && last[1] + 1 >= start) last[1] = end;
    else out.push([start, end]);
    mark.lastIndex = end;
  }
  return out;
}

/**
 * A view of the lines of `view` that hold `mark`, each decoded by `decode(text, from, to, b)`; lines not next to
 * each other are joined by the line break that follows the first (so each maps to a real character).
 */
function decodedLines(
  view: View,
  /** a character every mark begins with: most texts have none, and `includes` is much cheaper than a regex */
  lead: string,
  mark: RegExp,
  decode: (text: string, from: number, to: number, b: Builder) => void,
): View | undefined {
  const text = view.text;
  if (!text.includes(lead)) return undefined;
  const regions = linesWith(text, mark);
  if (regions.length === 0) return undefined;
  const b = new Builder();
  for (const [i, [from, to]] of regions.entries()) {
    if (i > 0) b.copy(text, from - 1, from);
    decode(text, from, to, b);
  }
  return b.view(view);
}

const ESCAPE = /\\(?:[nrt"'\\/]|u[0-9a-fA-F]{4})/g;

/** JSON (and shell) string escapes undone: `\n` → line break, `\"` → `"`, `\\` → `\`, `\u002B` → `+`. */
function unescaped(view: View): View | undefined {
  return decodedLines(view, '\\', ESCAPE, (text, from, to, b) => {
    let copied = from;
    for (let i = text.indexOf('\\', from); i !== -1 && i + 1 < to; i = text.indexOf('\\', i)) {
      const n = text[i + 1] as string;
      let width = 0;
      let chars = '';
      if (n === 'u' && i + 6 <= to && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        chars = String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
        width = 6;
      } else if (ESCAPES[n] !== undefined) {
        chars = ESCAPES[n] as string;
        width = 2;
      }
      if (width === 0) {
        i++;
        continue;
      }
      b.copy(text, copied, i);
      b.put(chars, i, i + width);
      i += width;
      copied = i;
    }
    b.copy(text, copied, to);
  });
}

const PERCENT = /%[2-7][0-9A-Fa-f]/g;

/** `%XX` sequences of printable ASCII decoded (a token in a query string, a password in a URL). */
function urlDecoded(view: View): View | undefined {
  return decodedLines(view, '%', PERCENT, (text, from, to, b) => {
    let copied = from;
    for (let i = text.indexOf('%', from); i !== -1 && i + 2 < to; i = text.indexOf('%', i + 1)) {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[2-7][0-9A-Fa-f]$/.test(hex)) continue;
      b.copy(text, copied, i);
      b.put(String.fromCharCode(Number.parseInt(hex, 16)), i, i + 3);
      copied = i + 3;
      i += 2;
    }
    b.copy(text, copied, to);
  });
}

/** 1: a base64 (or base64url) character, 2: `=` */
const B64 = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-')
  B64[c.charCodeAt(0)] = 1;
B64[61] = 2;
const isRun = (c: number) => c < 128 && B64[c] === 1;

/**
 * The runs of 16+ base64 characters with at most two `=` after them and neither before nor after, as [start,
 * end) (what `/(?<![\w+/-])[\w+/-]{16,}={0,2}(?![\w+/=-])/g` finds, in one loop over the characters: the regex
 * was most of the cost of the views).
 */
function base64Runs(text: string): [number, number][] {
  const out: [number, number][] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isRun(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < n && isRun(text.charCodeAt(i))) i++;
    let end = i;
    while (i < n && text.charCodeAt(i) === 61) i++;
    // too many `=`, or a run character after them: not a blob (the next run starts there)
    if (
      i - end > 2 ||
      end - start < 16 ||
      (i < n && text.charCodeAt(i) < 128 && B64[text.charCodeAt(i)] === 1)
    )
      continue;
    end = i;
    out.push([start, end]);
  }
  return out;
}
/** Texts longer than this are not searched for base64 blobs (images, bundles: nothing to decode there). */
const MAX_DECODE_TEXT = 2_000_000;
const MAX_BLOB = 65_536;

/**
 * Whether the first quads of a base64 run can decode to text: a byte of printable ASCII, tab or line break has
 * its top six bits in 2–3 or 8–31, so each quad starts with C, D, or I–Z, a–f. Rejects most identifiers and
 * random ids without decoding them.
 */
function textQuads(blob: string): boolean {
  for (let i = 0; i < blob.length && i < 32; i += 4) {
    const c = blob.charCodeAt(i);
    if (!(c === 67 || c === 68 || (c >= 73 && c <= 90) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** Decoded base64 blobs that are text (credentials, a PEM, an `.env`), each mapped to its whole blob. */
function decodedBlobs(view: View, depth: number): View[] {
  const out: View[] = [];
  const text = view.text;
  if (text.length > MAX_DECODE_TEXT) return out;
  for (const [start, end] of base64Runs(text)) {
    const blob = text.slice(start, end);
    if (blob.length > MAX_BLOB || !textQuads(blob) || !/[A-Z]/.test(blob) || !/[a-z]/.test(blob)) continue;
    const decoded = Buffer.from(
      blob,
      blob.includes('-') || blob.includes('_') ? 'base64url' : 'base64',
    ).toString('latin1');
    if (decoded.length < 8 || !/^[\x20-\x7e\t\r\n]*$/.test(decoded)) continue;
    // credentials or config: `user:password`, `KEY=value`, `key: value`, a PEM block, JSON
    if (!/[:=]|-----BEGIN|^\s*[{[]/.test(decoded)) continue;
    const [a, b] = view.map(start, end);
    const blobView: View = { text: decoded, map: () => [a, b], blob: true };
    out.push(blobView);
    if (depth > 1) out.push(...decodedBlobs(blobView, depth - 1));
  }
  return out;
}

/**
 * The views of a text to run the rules on, the text itself first (or, if it has line numbers or diff markers,
 * the text without them instead: nothing is lost, since the prefixes hold no secret). Most texts have none of
 * the marks and get only themselves. The decoded views hold only the lines that decoding changes.
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
  const decoded = urlDecoded(base);
  if (decoded) views.push(decoded);
  if (current !== base) {
    const inner = urlDecoded(current);
    if (inner) views.push(inner);
  }
  if (text.length >= 16) {
    const blobs = decodedBlobs(base, 2);
    if (current !== base) {
      // the same blob seen in both (on a line with escapes elsewhere) is decoded once
      const seen = new Set(blobs.map((v) => v.map(0, 0).join()));
      for (const v of decodedBlobs(current, 2)) if (!seen.has(v.map(0, 0).join())) blobs.push(v);
    }
    views.push(...blobs);
  }
  return views;
}
