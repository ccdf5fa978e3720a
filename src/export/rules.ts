// Secret and PII detectors for export redaction (used by redact.ts). Pure functions over one string: each reports
// the ranges to replace, with a kind and a priority; the Redactor decides overlaps and placeholders.
//
// Two layers:
// 1. secretlint's maintained vendor-token rules (@secretlint/secretlint-rule-preset-recommend 12.0.0, the last
//    release whose engines allow Node 20), run synchronously through the rule-creator contract of
//    @secretlint/types (`create(context, options).file(source)`), not through @secretlint/core (see SecretlintScanner).
// 2. Our own regexes for what the preset lacks or gets wrong: any-body PEM blocks, JWTs, bearer/authorization
//    headers, `.env` lines and secret-named assignments, credentials in any `scheme://user:pass@` URL, Stripe,
//    Google, looser OpenAI/Anthropic/GitHub/GitLab shapes, emails and the user name in home paths. Vendor
//    patterns are translated from gitleaks `config/gitleaks.toml` (MIT, read at 009e025) unless noted.
//
// Precision over recall where a rule needs context (assignments, YAML, CLI flags): values that look like code
// (calls, member expressions, type names, `${templates}`, trailing `,`/`;`), placeholders (`xxxx`, `<key>`,
// `your-api-key`) and paths are left alone, so ordinary code stays readable. Recall over precision where the
// shape alone is telling (PEM blocks with any body, vendor prefixes, JWTs).
import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import { type Anchored, anchored, matchesOf } from './redact/anchored.js';
import { type Add, type Finding, PRIORITY } from './redact/finding.js';
import { KeywordSet } from './redact/keywords.js';

export { type Add, type Finding, PRIORITY } from './redact/finding.js';

// ---------------------------------------------------------------------------------------------------------------
// Value and key heuristics

/** Shannon entropy in bits per character. */
export function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const hasDigit = (v: string) => /\d/.test(v);
const hasLetter = (v: string) => /[A-Za-z]/.test(v);

/** Words of an identifier: `apiKey` / `API_KEY` / `api-key` / `x.api_key` → [..., 'api', 'key']. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

const SECRET_LAST_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'secret',
  'token',
  'credential',
  'credentials',
  'apikey',
  'dsn',
]);
/** Also as the end of a run-together last word: `PGPASSWORD`, `GITHUBTOKEN`, `authtoken`. */
const SECRET_SUFFIXES = ['password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'credentials'];
const KEY_QUALIFIERS = new Set([
  'api',
  'secret',
  'private',
  'access',
  'auth',
  'client',
  'encryption',
  'signing',
  'master',
  'license',
  'service',
  'account',
  'app',
  'webhook',
  'session',
  'ssh',
  'deploy',
  'admin',
  'subscription',
  'openai',
  'anthropic',
]);

/**
 * Whether a key names a secret: its last word is password/secret/token/credentials/… (`DB_PASSWORD`, `accessToken`,
 * `client_secret`) or ends with one run together (`PGPASSWORD`), or is `key` qualified by api/secret/private/…
 * (`api_key`, `X-Api-Key`), or `pass` qualified (`SMTP_PASS`); an ALL-CAPS env name ending in `_KEY` counts too
 * (`STRIPE_KEY`). Plurals (`max_tokens`) and other last words (`token_type`, `password_hash`, `secretName`) do
 * not; nor `key` alone (JSON maps, React keys).
 */
export function isSecretKey(key: string): boolean {
  const words = keyWords(key);
  const last = words.at(-1);
  if (last === undefined) return false;
  const prev = words.at(-2);
  if (SECRET_LAST_WORDS.has(last) || SECRET_SUFFIXES.some((suffix) => last.endsWith(suffix))) return true;
  if (last === 'pass' && prev !== undefined) return true;
  if (last === 'key' && prev !== undefined) {
    if (prev === 'public' || prev === 'publishable') return false;
    if (KEY_QUALIFIERS.has(prev)) return true;
    return /^[A-Z0-9_]+$/.test(key) && /[A-Z]/.test(key);
  }
  return false;
}

const isEnvName = (key: string) => /^[A-Z][A-Z0-9_]*$/.test(key) && key.includes('_');

const NOT_SECRET_VALUES = new Set([
  'true',
  'false',
  'null',
  'none',
  'nil',
  'undefined',
  'yes',
  'no',
  'on',
  'off',
  'string',
  'number',
  'boolean',
  'bool',
  'int',
  'integer',
  'str',
  'any',
  'unknown',
  'object',
  'required',
  'optional',
  'changeme',
  'example',
  'placeholder',
  'redacted',
  'secret',
  'password',
  'token',
  'dummy',
  'empty',
  'bearer',
  'basic',
]);

/**
 * Whether the value of a secret-named key is worth redacting. `env`: a `KEY=value` line or env-style name, where
 * nearly any value is a secret; `config`: a quoted literal in code or config; `loose`: an unquoted value in
 * YAML/headers under a lower-case key, which must also look random (digits, or mixed classes, or high entropy).
 */
export function plausibleSecret(value: string, key: string, mode: 'env' | 'config' | 'loose'): boolean {
  if (value.length < (mode === 'env' ? 3 : 4)) return false;
  if (value.includes('[REDACTED_')) return false;
  // Templates and references: ${X}, $(cmd), {{ x }}, $VAR, %VAR%, <your key>, [value]
  if (/\$\{|\$\(|\{\{|\}\}|^\$[A-Za-z_]|^%\w+%$|^<|^\[.*\]$/.test(value)) return false;
  // Masked or elided: xxxx, ****, sk-..., your-api-key, …_here
  if (/^(.)\1+$|x{4,}|X{4,}|\*{3,}|\.{3}|…|^(?:your|my)[-_ ]|[-_]here$/i.test(value)) return false;
  const lower = value.toLowerCase();
  if (NOT_SECRET_VALUES.has(lower)) return false;
  // Numbers (`MAX_TOKEN=100`, `token: 3600`); long digit strings can be PINs or ids and are kept as secrets
  if (/^-?\d{1,11}(?:\.\d+)?$/.test(value)) return false;
  if (keyWords(value).join('') === keyWords(key).join('')) return false;
  // Paths and plain URLs (a URL with credentials is the url rule's business)
  if (/^(?:\.{0,2}\/|~\/|[A-Za-z]:\\)/.test(value) || /^[a-z][a-z0-9+.-]*:\/\/[^@]*$/i.test(value))
    return false;
  // Code: calls, trailing separators, member expressions without digits
  if (/[()]/.test(value) || /[,;]$/.test(value) || /^[A-Za-z_$][\w$.]*\[/.test(value)) return false;
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(value) && !hasDigit(value)) return false;
  if (mode !== 'env' && /\s/.test(value)) return false;
  // Identifiers and enum-like names (`'aws_secret_key'`, `'bearer-token'`, `'accessToken'`) in code and config
  if (
    mode !== 'env' &&
    /^[?@#.$:]?(?:[a-z]+(?:[_-][a-z]+)+|[a-z]+(?:[A-Z][a-z]*)+|[A-Z][a-z]+(?:[A-Z][a-z]*)+|[A-Z]+(?:_[A-Z]+)+)$/.test(
      value,
    )
  ) {
    return false;
  }
  // A short literal without a digit in code is a word or a name more often than a password
  if (mode === 'config' && !hasDigit(value) && value.length < 8) return false;
  if (mode === 'loose') {
    if (value.length < 6) return false;
    if (/^[A-Za-z_]+$/.test(value)) return false;
    if (!hasDigit(value) && entropy(value) < 3.5) return false;
  }
  return true;
}

/** Whether a string value under this (object) key is a secret by context: `{"DB_PASSWORD": "hunter2"}`. */
export function secretUnderKey(key: string, value: string): boolean {
  return isSecretKey(key) && plausibleSecret(value, key, isEnvName(key) ? 'env' : 'config');
}

/** A value learned from a context rule is also replaced where it appears bare later, if it cannot be a word. */
export function propagatable(secret: string): boolean {
  if (secret.length < 8 || /\s/.test(secret)) return false;
  return (hasDigit(secret) && hasLetter(secret)) || (secret.length >= 12 && entropy(secret) >= 3.5);
}

// ---------------------------------------------------------------------------------------------------------------
// Layer 1: secretlint's preset, driven synchronously

interface SlMessage {
  messageId: string;
  data?: Record<string, unknown>;
}
interface SlSource {
  content: string;
  filePath: string | undefined;
  ext: string;
  contentType: 'text';
}
interface SlContext {
  sharedOptions: Record<string, unknown>;
  createTranslator(messages: unknown): (messageId: string, data?: Record<string, unknown>) => SlMessage;
  report(descriptor: { message: SlMessage; range: readonly [number, number] }): void;
  ignore(descriptor: unknown): void;
}
interface SlRule {
  meta: { id: string; supportedContentTypes: string[] };
  create(context: SlContext, options: Record<string, unknown>): { file?(source: SlSource): unknown };
}

const SL_PREFIX = '@secretlint/secretlint-rule-';

/** Our kind for each secretlint rule (or rule/messageId); null: not a secret we redact. */
const SECRETLINT_KINDS: Record<string, string | Record<string, string | null>> = {
  aws: { AWSAccessKeyID: 'aws_access_key_id', AWSSecretAccessKey: 'aws_secret_key', AWSAccountID: null },
  privatekey: 'private_key',
  // PackageJSON_xOauthToken reports `https://` plus the token's length, from `.{1,256}` that can span a line;
  // our url rule replaces the token of `https://TOKEN:x-oauth-basic@github.com` instead.
  npm: { NPM_ACCESS_TOKEN: 'npm_token', Npmrc_authToken: 'npm_token', PackageJSON_xOauthToken: null },
  basicauth: 'url_password',
  'database-connection-string': 'url_password',
  slack: { SLACK_TOKEN: 'slack_token', IncomingWebhook: 'slack_webhook' },
  sendgrid: 'sendgrid_key',
  shopify: 'shopify_token',
  github: 'github_token',
  gitlab: 'gitlab_token',
  grafana: 'grafana_token',
  openai: 'openai_key',
  anthropic: 'anthropic_key',
  groq: 'groq_key',
  huggingface: 'huggingface_token',
  linear: 'linear_key',
  notion: 'notion_token',
  '1password': 'onepassword_token',
  'hashicorp-vault': 'vault_token',
  vercel: 'vercel_token',
  databricks: 'databricks_token',
  docker: 'docker_token',
  figma: 'figma_token',
};

/**
 * Not registered: `gcp` (looks at whole `.json`/`.p12` files: reports the entire content, or reads the file from
 * disk and verifies it asynchronously) and `filter-comments` (a `secretlint-disable` comment in a tool output
 * would switch redaction off for the rest of the text; in 12.0.0 `disabled: true` on a preset's rule is also
 * ignored by @secretlint/core, so it could not be turned off there).
 */
const SL_SKIP = new Set(['gcp', 'filter-comments']);

/**
 * Literals (ASCII case-insensitive) without which a rule of the preset cannot report anything we keep: each of
 * its patterns requires one of them (checked against 12.0.0's patterns). One keyword pass per text then skips
 * most rules, as gitleaks' keywords do; the `aws` rule alone cost a fifth of the redaction time, since its
 * patterns begin with optional parts and are tried at every position. A rule not listed always runs.
 */
const SL_KEYWORDS: Record<string, readonly string[]> = {
  // AWSAccountID is not kept (null above): only the key id prefixes and `secret…access…key`
  aws: ['secret', 'a3t', 'akia', 'agpa', 'aida', 'aroa', 'aipa', 'anpa', 'anva', 'asia'],
  privatekey: ['private key'],
  npm: ['x-oauth-basic', '_authtoken', 'npm_'],
  basicauth: ['://'],
  'database-connection-string': ['mongodb', 'mysql', 'postgres'],
  slack: ['xox', 'xapp', 'hooks.slack.com'],
  sendgrid: ['sg.'],
  shopify: ['shppa_', 'shpca_', 'shpat_', 'shpss_'],
  github: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
  gitlab: ['glpat-'],
  grafana: ['glc_', 'glsa_'],
  openai: ['t3blbkfj'],
  anthropic: ['sk-ant-'],
  groq: ['gsk_'],
  huggingface: ['hf_'],
  linear: ['lin_api_'],
  notion: ['ntn_'],
  '1password': ['ops_'],
  'hashicorp-vault': ['hvs.', 'hvb.', 'hvr.'],
  vercel: ['vcp_', 'vci_', 'vca_', 'vcr_', 'vck_'],
  databricks: ['dapi'],
  docker: ['dckr_pat_'],
  figma: ['figd_'],
};

function secretlintKind(rule: string, messageId: string): string | null {
  const entry = SECRETLINT_KINDS[rule];
  if (typeof entry === 'string') return entry;
  if (entry !== undefined) return entry[messageId] ?? null;
  return `${rule.replace(/[^a-z0-9]+/g, '_')}_secret`;
}

/**
 * The preset's rules called directly, one report handler each, created once per Redactor. Why not
 * `@secretlint/core`'s `lintSource`: it is async, costs ~0.3 ms per call even on a short string, and its profiler
 * keeps every `performance.mark` (two per rule per call) in an array it scans linearly on each one — measured
 * here, 20 000 small calls grew the heap by 360 MB and, once the event loop got to run the observer,
 * 2 000 calls took 206 s. Calling the handlers ourselves is synchronous and keeps nothing between calls.
 */
export class SecretlintScanner {
  private readonly handlers: {
    rule: string;
    file: (source: SlSource) => unknown;
    /** indices into `keywords`; undefined: always run */
    gate: readonly number[] | undefined;
  }[] = [];
  private readonly keywords: KeywordSet;
  private hits: { rule: string; message: SlMessage; range: readonly [number, number] }[] = [];

  constructor() {
    const words: string[] = [];
    for (const rule of presetRules as unknown as readonly SlRule[]) {
      const name = rule.meta.id.startsWith(SL_PREFIX) ? rule.meta.id.slice(SL_PREFIX.length) : rule.meta.id;
      if (SL_SKIP.has(name) || !rule.meta.supportedContentTypes.includes('text')) continue;
      const context: SlContext = {
        sharedOptions: {},
        createTranslator: () => (messageId, data) =>
          data === undefined ? { messageId } : { messageId, data },
        report: (descriptor) =>
          this.hits.push({ rule: name, message: descriptor.message, range: descriptor.range }),
        ignore: () => {},
      };
      // enableIDScanRule: also report AWS access key ids (AKIA…), off by default in the rule.
      const handler = rule.create(context, name === 'aws' ? { enableIDScanRule: true } : {});
      const file = handler.file?.bind(handler);
      if (!file) continue;
      const own = SL_KEYWORDS[name];
      const gate = own?.map((k) => words.push(k) - 1);
      this.handlers.push({ rule: name, file, gate });
    }
    this.keywords = new KeywordSet(words);
  }

  scan(text: string, add: Add): void {
    // filePath undefined: the npm rule then checks the `package.json` x-oauth pattern; `.npmrc` `_authToken=`
    // lines are our NPMRC rule below.
    const source: SlSource = { content: text, filePath: undefined, ext: '.txt', contentType: 'text' };
    this.hits = [];
    const found = this.keywords.found(text);
    for (const { rule, file, gate } of this.handlers) {
      if (gate && !gate.some((k) => found.has(k))) continue;
      const result = file(source);
      if (result instanceof Promise)
        throw new Error(`secretlint rule ${rule} is asynchronous; redaction needs sync rules`);
    }
    for (const { rule, message, range } of this.hits) {
      const kind = secretlintKind(rule, message.messageId);
      if (kind === null) continue;
      let [start, end] = locate(text, range, message.data);
      if (kind === 'url_password') {
        const password = urlPasswordIn(text, start, end);
        if (!password) continue;
        [start, end] = password;
      } else if (kind === 'private_key') {
        const body = pemBodyAt(text, start);
        if (body) [start, end] = body;
      }
      const priority =
        kind === 'private_key'
          ? PRIORITY.privateKey
          : kind === 'url_password'
            ? PRIORITY.context
            : PRIORITY.vendor;
      add(start, end, kind, priority);
    }
  }
}

/**
 * The reported range, corrected where 12.0.0 gets it wrong: the AWS secret-key and npm rules report
 * [start of the whole match, + length of the secret group] (e.g. `aws_secret_access_key = ` plus the first 16
 * characters of the key). The message data carries the secret itself, so find it from the reported start.
 */
function locate(text: string, range: readonly [number, number], data: Record<string, unknown> | undefined) {
  const [start, end] = range;
  const reported = text.slice(start, end);
  for (const value of Object.values(data ?? {})) {
    if (typeof value !== 'string' || value.length < 8 || value === reported) continue;
    const at = text.indexOf(value, start);
    if (at !== -1 && at <= end) return [at, at + value.length] as const;
  }
  return [start, end] as const;
}

// ---------------------------------------------------------------------------------------------------------------
// Layer 2: our own detectors

type Detector = (text: string, add: Add) => void;

/** Every match of a vendor-shaped regex (group 1 if present, else the whole match), with an optional check. */
function shape(
  re: RegExp,
  kind: string,
  accept?: (secret: string) => boolean,
  priority: number = PRIORITY.vendor,
) {
  return (text: string, add: Add) => {
    for (const m of text.matchAll(re)) {
      const secret = m[1] ?? m[0];
      if (accept && !accept(secret)) continue;
      const start = (m.index ?? 0) + m[0].indexOf(secret);
      add(start, start + secret.length, kind, priority);
    }
  };
}

/**
 * The keywords of every `when` gate of more than one character, searched for all at once: one pass over a text
 * (redact/keywords.ts, ASCII case-insensitive) tells which may be in it, in place of an `includes` per keyword
 * per detector. The detectors run one after another on the same text, so the last text's answer is kept.
 */
const gateWords: string[] = [];
let gates: KeywordSet | undefined;
let gatedText: string | undefined;
let gatesFound = new Set<number>();

function gatesIn(text: string): Set<number> {
  if (text !== gatedText) {
    gates ??= new KeywordSet(gateWords);
    gatesFound = gates.found(text);
    gatedText = text;
  }
  return gatesFound;
}

/** Runs the detector only if the text contains one of the keywords (a cheap filter, as gitleaks' `keywords`). */
function when(keywords: string[] | RegExp, detector: Detector): Detector {
  if (!Array.isArray(keywords))
    return (text, add) => {
      if (keywords.test(text)) detector(text, add);
    };
  // a one-character keyword is in almost every text: `includes` finds it at once
  if (keywords.some((k) => k.length === 1))
    return (text, add) => {
      if (keywords.some((k) => text.includes(k))) detector(text, add);
    };
  const indices = keywords.map((k) => gateWords.push(k) - 1);
  return (text, add) => {
    // found case-insensitively first: a keyword the pass did not see is not in the text in any case
    const found = gatesIn(text);
    if (keywords.some((k, n) => found.has(indices[n] as number) && text.includes(k))) detector(text, add);
  };
}

const mixed = (s: string) => hasDigit(s) && hasLetter(s);

// --- Private keys: any `-----BEGIN … PRIVATE KEY-----` block, whatever its body (gitleaks `private-key` has
// `[\s\S-]{64,}?`; secretlint's rule wants ≥100 base64 characters starting with an ASN.1 `MI`/openssh magic).
// Only the body is replaced, the markers stay: `-----BEGIN RSA PRIVATE KEY-----\n[REDACTED_PRIVATE_KEY_1]\n-----END …`.

// (matchAll starts at a regex's lastIndex: regexes used with exec/lastIndex are kept apart from matchAll ones)
const PEM_BEGIN = /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_BEGIN_AT = new RegExp(PEM_BEGIN.source, 'y');
const PEM_END = /-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g;
/** A body: base64, PEM header lines (`Proc-Type: 4,ENCRYPTED`), real or JSON-escaped line breaks. Not code. */
const PEM_BODY = /^(?:[A-Za-z0-9+/=\s.:,_-]|\\[nrt])*$/;
const PEM_LINE = /(?:\r?\n|\\r\\n|\\n)([^\r\n\\]*)/y;
const PEM_SAME_LINE = /[ \t]+[A-Za-z0-9+/=]{16,}(?:[ \t]+[A-Za-z0-9+/=]{16,})*/y;

function trimmed(text: string, start: number, end: number): readonly [number, number] | undefined {
  const body = text.slice(start, end);
  const lead = /^(?:\s|\\[nrt])*/.exec(body)?.[0].length ?? 0;
  const trail = /(?:\s|\\[nrt])*$/.exec(body.slice(lead))?.[0].length ?? 0;
  return end - trail > start + lead ? [start + lead, end - trail] : undefined;
}

/** The body of the private key block whose BEGIN marker starts at `begin`, up to END or, if cut, its last line. */
export function pemBodyAt(text: string, begin: number): readonly [number, number] | undefined {
  PEM_BEGIN_AT.lastIndex = begin;
  const marker = PEM_BEGIN_AT.exec(text);
  if (!marker) return undefined;
  const after = begin + marker[0].length;
  // END within 64 KB and before any other BEGIN (keeps the search linear however many markers there are)
  const next = text.indexOf('-----BEGIN', after);
  const window = text.slice(after, Math.min(next === -1 ? text.length : next, after + 65_536));
  PEM_END.lastIndex = 0;
  const end = PEM_END.exec(window);
  if (end && PEM_BODY.test(window.slice(0, end.index))) return trimmed(text, after, after + end.index);
  // No END (output cut by head/truncation) or junk before it: take the base64 lines that follow.
  let bodyEnd = after;
  PEM_SAME_LINE.lastIndex = after;
  if (PEM_SAME_LINE.exec(text)) bodyEnd = PEM_SAME_LINE.lastIndex;
  let pos = bodyEnd;
  for (;;) {
    PEM_LINE.lastIndex = pos;
    const line = PEM_LINE.exec(text);
    if (!line) break;
    const content = line[1] ?? '';
    if (/^[A-Za-z0-9+/=]+$/.test(content)) bodyEnd = PEM_LINE.lastIndex;
    else if (!/^(?:Proc-Type|DEK-Info|Comment):/.test(content) && !(content === '' && bodyEnd === after))
      break;
    pos = PEM_LINE.lastIndex;
  }
  return bodyEnd > after ? trimmed(text, after, bodyEnd) : undefined;
}

const privateKeys: Detector = when(['PRIVATE KEY'], (text, add) => {
  for (const m of text.matchAll(PEM_BEGIN)) {
    const body = pemBodyAt(text, m.index ?? 0);
    if (body) add(body[0], body[1], 'private_key', PRIORITY.privateKey);
  }
});

// --- Vendor tokens the preset lacks, or only in one exact length. Boundaries: not glued to [A-Za-z0-9_-].

const B = '(?<![A-Za-z0-9_-])';
const E = '(?![A-Za-z0-9_-])';
const re = (source: string, flags = 'g') => new RegExp(source, flags);

const vendorTokens: Detector[] = [
  // OpenAI: gitleaks `openai-api-key` wants exactly 74/58 characters around `T3BlbkFJ`; project, service-account
  // and admin keys of other lengths exist, as do legacy 48-character keys.
  when(
    ['sk-'],
    shape(re(`${B}(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,})${E}`), 'openai_key', (s) => mixed(s)),
  ),
  when(['T3BlbkFJ'], shape(re(`${B}(sk-[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,})${E}`), 'openai_key')),
  when(
    ['sk-'],
    shape(
      re(`${B}(sk-[A-Za-z0-9]{48})${E}`),
      'openai_key',
      (s) => /[a-z]/.test(s) && /[A-Z]/.test(s) && hasDigit(s),
    ),
  ),
  // Anthropic: gitleaks `anthropic-api-key`/`anthropic-admin-api-key` (`sk-ant-api03-…{93}AA`), loosened to the
  // other prefixes Claude Code uses (`sk-ant-oat01-` OAuth, `sk-ant-ort01-` refresh) and any length.
  when(['sk-ant-'], shape(re(`${B}(sk-ant-[a-z]{3,5}\\d{2}-[A-Za-z0-9_-]{20,})${E}`), 'anthropic_key')),
  // Other `sk-` keys of OpenAI-compatible providers (DeepSeek `sk-` + 32 hex, OpenRouter `sk-or-v1-` + 64 hex…):
  // long, random, and not glued to a word (`task-`, `risk-` never match).
  when(
    ['sk-'],
    shape(re(`${B}(sk-[A-Za-z0-9_-]{32,})${E}`), 'api_key', (s) => mixed(s) && entropy(s.slice(3)) >= 3.5),
  ),
  // GitHub (secretlint wants exactly 36/82 characters; GitHub documents that token length may grow).
  when(['gh', 'github_pat_'], shape(re(`${B}(gh[pousr]_[A-Za-z0-9]{30,255})${E}`), 'github_token')),
  when(['github_pat_'], shape(re(`${B}(github_pat_[A-Za-z0-9_]{40,255})${E}`), 'github_token')),
  // GitLab: gitleaks `gitlab-*` token family (pat, deploy, pipeline trigger, runner, CI job, feed, mail, OAuth, SCIM…).
  when(
    ['gl'],
    shape(
      re(
        `${B}((?:glpat|gldt|glptt|glrt|glcbt|glft|glimt|gloas|glsoat|glagent|glffct)-[A-Za-z0-9_.-]{20,})${E}`,
      ),
      'gitlab_token',
    ),
  ),
  // Slack tokens other than the preset's xoxb/xoxp/xapp/xoxa/xoxo/xoxr (gitleaks `slack-*`: xoxe, xoxs, config).
  when(['xox'], shape(re(`${B}(xox[a-z](?:\\.xox[a-z])?-[A-Za-z0-9-]{10,})${E}`), 'slack_token')),
  when(
    ['discord'],
    shape(
      /https:\/\/(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[\w-]{20,}/g,
      'discord_webhook',
    ),
  ),
  // Stripe: gitleaks `stripe-access-token` (secret and restricted keys; publishable `pk_` keys are public),
  // plus webhook signing secrets.
  when(
    ['k_live_', 'k_test_', 'k_prod_', 'whsec_'],
    shape(
      re(`${B}((?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}|whsec_[A-Za-z0-9]{24,})${E}`),
      'stripe_key',
    ),
  ),
  // Google: gitleaks `gcp-api-key` (AIza + 35), OAuth access tokens (ya29.) and client secrets (GOCSPX-).
  when(['AIza'], shape(re(`${B}(AIza[\\w-]{35})${E}`), 'google_api_key')),
  when(
    ['ya29.', 'GOCSPX-'],
    shape(re(`${B}(ya29\\.[\\w-]{20,}|GOCSPX-[\\w-]{20,})${E}`), 'google_oauth_token'),
  ),
  // Hugging Face organization tokens (gitleaks `huggingface-organization-api-token`); user tokens are the preset's.
  when(['api_org_'], shape(re(`${B}(api_org_[A-Za-z]{34})${E}`), 'huggingface_token')),
  // AWS secret access key next to its name (git-secrets / secretlint pattern, here with the right range).
  when(
    /secret_?access_?key/i,
    shape(
      /(?:aws)?_?secret_?access_?key["']?\s*(?::|=>|=)\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
      'aws_secret_key',
      (s) => s !== 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' && mixed(s),
    ),
  ),
  // .npmrc `_authToken=` (the preset's rule only runs for files named .npmrc, and reports a shifted range).
  when(
    ['_authToken'],
    shape(/_authToken\s*=\s*["']?([^\s"'$\\][^\s"'\\]*)/g, 'npm_token', (s) => s.length >= 8),
  ),
  // Others from gitleaks with a distinctive prefix.
  when(['pypi-'], shape(re(`${B}(pypi-AgEIcHlwaS5vcmc[\\w-]{50,})${E}`), 'pypi_token')),
  when(['_v1_'], shape(re(`${B}(do[opr]_v1_[a-f0-9]{64})${E}`), 'digitalocean_token')),
  when(['pplx-'], shape(re(`${B}(pplx-[A-Za-z0-9]{48})${E}`), 'perplexity_key')),
  when(['sntryu_'], shape(re(`${B}(sntryu_[a-f0-9]{64})${E}`), 'sentry_token')),
  when(
    ['AGE-SECRET-KEY-'],
    shape(/AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/g, 'age_secret_key'),
  ),
];

// --- JWTs (gitleaks `jwt`, restricted to a JSON header and payload: both segments start with `eyJ` = `{"`).
const jwts: Detector = when(
  ['eyJ'],
  shape(
    /(?<![\w-])eyJ[A-Za-z0-9_-]{10,}={0,2}\.eyJ[A-Za-z0-9_-]{10,}={0,2}\.[A-Za-z0-9_-]*={0,2}(?![\w-])/g,
    'jwt',
  ),
);

// --- Authorization material

const TOKEN_CHARS = '[A-Za-z0-9\\-._~+/]';
const authHeaders: Detector[] = [
  // `Authorization: Bearer …`, `"Bearer …"`, `-H 'Authorization: Bearer …'`: the token, if it is one
  // (≥16 characters with letters and digits; `Bearer ${token}` and `Bearer YOUR_TOKEN` are not).
  when(
    /bearer/i,
    shape(
      re(`\\bbearer[ \\t]+(${TOKEN_CHARS}{16,}={0,2})(?![A-Za-z0-9\\-._~+/=])`, 'gi'),
      'bearer_token',
      mixed,
      PRIORITY.context,
    ),
  ),
  // `Authorization: Basic <base64>`, `Authorization: token <x>`, `Authorization: <x>` (gitleaks `curl-auth-header`).
  when(
    /authorization/i,
    shape(
      re(
        `\\bauthorization\\\\?["']?[ \\t]*[:=][ \\t]*\\\\?["']?[ \\t]*(?:basic|token|apikey|api-key)?[ \\t]*(${TOKEN_CHARS}{12,}={0,2})`,
        'gi',
      ),
      'auth_header',
      (s) => mixed(s) || /=$/.test(s),
      PRIORITY.context,
    ),
  ),
  // `X-Api-Key: …`, `api-key: …`, `x-auth-token: …` headers anywhere (curl -H, HTTP dumps); `apiKey: "…"` or
  // `"access_token": "…"` in code and JSON are assignments (config_secret).
  when(
    /api-key|auth-token|access-token/i,
    shape(
      re(
        `\\b(?:x-)?(?:api-key|auth-token|access-token)["']?[ \\t]*:[ \\t]*["']?(${TOKEN_CHARS}{12,}={0,2})`,
        'gi',
      ),
      'auth_header',
      (s) => mixed(s),
      PRIORITY.context,
    ),
  ),
  // curl -u user:password (gitleaks `curl-auth-user`): the password.
  // (the gate without the `(?:^|\s)` of the pattern: a literal first is found fast, one tried at every character not)
  when(/-u[ =]|--user[ =]/, (text, add) => {
    for (const m of text.matchAll(
      /(?<=^|\s)(?:-u|--user)(?:=|[ \t]+)(["']?)([^\s:"']{1,100}):([^\s"']{3,200})\1/dg,
    )) {
      const password = m[3] ?? '';
      const at = m.indices?.[3];
      if (at && plausibleSecret(password, 'password', 'config'))
        add(at[0], at[1], 'auth_header', PRIORITY.context);
    }
  }),
];

// --- Credentials in URLs: `scheme://user:password@host` for any scheme (secretlint covers http(s)/ftp with a
// narrow character set and postgres/mysql/mongodb; redis, amqp, smtp, git… are ours), `https://TOKEN@host`, and
// `https://TOKEN:x-oauth-basic@github.com`. Only the password (or the token) is replaced; user and host stay.

const URL_USERINFO =
  /\b[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/([^\s:/?#@"'`<>[\]\\]{0,200}):([^\s/?#"'`<>\\]{1,200})@(?=[\w[.-])/dg;
const URL_USERINFO_FROM = new RegExp(URL_USERINFO.source, 'dg');
const URL_TOKEN_USER = /\b(?:https?|git|ssh):\/\/([A-Za-z0-9_-]{20,200})@(?=[\w.-])/dg;

/** [start, end) of the password in the first `scheme://user:pass@` within text[start, end), if plausible. */
export function urlPasswordIn(
  text: string,
  start: number,
  end: number,
): readonly [number, number] | undefined {
  URL_USERINFO_FROM.lastIndex = start;
  const m = URL_USERINFO_FROM.exec(text);
  if (!m || (m.index ?? 0) >= end) return undefined;
  const at = m.indices?.[2];
  return at && plausibleUrlPassword(m[2] ?? '') ? [at[0], at[1]] : undefined;
}

function plausibleUrlPassword(password: string): boolean {
  if (/^(?:password|passwd|pass|pwd|secret|changeme|x-oauth-basic)$/i.test(password)) return false;
  // templates and masks: `:${DB_PASSWORD}@`, `:$PASS@`, `:<password>@`, `:****@`
  if (/\$\{|\$\(|\{\{|^\$[A-Za-z_]|^%\w+%$|^<|^\*+$|^x+$/i.test(password)) return false;
  return true; // any other password in a URL, even a short one
}

const urlCredentials: Detector = when(['://'], (text, add) => {
  for (const m of text.matchAll(URL_USERINFO)) {
    const [user, password] = [m[1] ?? '', m[2] ?? ''];
    const [u, p] = [m.indices?.[1], m.indices?.[2]];
    if (p && plausibleUrlPassword(password)) add(p[0], p[1], 'url_password', PRIORITY.context);
    // https://<token>:x-oauth-basic@github.com/… : the user is the secret
    if (u && /^x-oauth-basic$/i.test(password) && user.length >= 8)
      add(u[0], u[1], 'url_password', PRIORITY.context);
  }
  for (const m of text.matchAll(URL_TOKEN_USER)) {
    const at = m.indices?.[1];
    if (at && mixed(m[1] ?? '') && entropy(m[1] ?? '') >= 3.5)
      add(at[0], at[1], 'url_password', PRIORITY.context);
  }
});

// --- Assignments: `.env` lines, secret-named keys with literal values (code, JSON, YAML, TOML, INI), CLI flags.

/** `KEY=value` where the text can start a line: start, real or JSON-escaped line break. */
const LINE_START = '(?<=^|[\\r\\n]|\\\\n)';

// .env / shell / Dockerfile / INI line: [export|set|ENV|ARG|# ] KEY[ ]=[ ]value
// (spaces around `=` only with an unquoted value, INI-style; `KEY = "…"` is code or TOML, the quoted rule's)
const ENV_LINE = re(
  `${LINE_START}[ \\t]*(?:#[ \\t]*)?(?:export[ \\t]+|set[ \\t]+|ENV[ \\t]+|ARG[ \\t]+|\\$env:)?([A-Za-z_][A-Za-z0-9_.-]*)(?:=(?:"([^"\\r\\n\\\\]*)"|'([^'\\r\\n\\\\]*)'|([^\\s"'\`\\\\]+))|[ \\t]*=[ \\t]*([^\\s"'\`\\\\]+))`,
  'dg',
);
// An env-style name assigned inline in a command: `OPENAI_API_KEY=sk-… npm start`, `docker run -e TOKEN=…`.
// (Not an anchored pattern: without its lookbehind, every position inside a long run of capitals and digits
// would scan the rest of the run for a `_`, quadratic in the run.)
const ENV_INLINE = re(
  `(?<=[\\s;&|(\`"'{,])([A-Z][A-Z0-9_]*_[A-Z0-9_]*)=(?:"([^"\\r\\n\\\\]*)"|'([^'\\r\\n\\\\]*)'|([^\\s"'\`\\\\;&|)]+))`,
  'dg',
);
// key: "literal" / key = 'literal' / "key": "literal" / key => "literal" (also JSON-escaped quotes); not
// comparisons (`typeof apiKey === 'function'`)
const CONFIG_QUOTED =
  /(?<![\w$])(?:\\?["'])?([A-Za-z_$][\w$.-]{0,80}?)(?:\\?["'])?[ \t]*(?::=|=>|=|:)[ \t]*\\?(["'`])([^"'`\\\r\n]{1,300})\\?\2/dg;
// YAML / HTTP header line with an unquoted value: `  password: hunter2`, `X-Api-Key: abc123…`
const YAML_LINE = re(
  `${LINE_START}[ \\t]*(?:-[ \\t]+)?([A-Za-z_][\\w.-]*)[ \\t]*:[ \\t]+([^\\s"'\`#\\\\][^\\s"'\`\\\\]*)[ \\t]*(?=$|[\\r\\n]|\\\\[nr]|[ \\t]#)`,
  'dg',
);
// --password=…, --api-key …, --token "…"
const CLI_FLAG_BEFORE = /[\s"']/;
const CLI_FLAG = anchored(
  /(?<=^|[\s"'])/.source,
  /--?([A-Za-z][\w-]{1,40})(?:=|[ \t]+)(["']?)([^\s"'`\\]{3,300})\2(?=$|[\s"'`;&|)]|\\[nr])/.source,
  'dg',
  (text, at) => at === 0 || CLI_FLAG_BEFORE.test(text[at - 1] as string),
);

function assignments(
  pattern: RegExp | Anchored,
  valueGroups: readonly number[],
  mode: (key: string) => 'env' | 'config' | 'loose',
  kind: string,
  spaces = true,
  /** What every match holds: a part without it is not searched (a cheap test before the pattern). */
  holds?: RegExp,
): PartsDetector {
  return (text, add, parts) => {
    for (const [from, to] of parts ?? secretKeyLines(text)) {
      const part = from === 0 && to === text.length ? text : text.slice(from, to);
      // (given parts: every line, read as it is, the reference the tests compare with)
      if (holds && parts === undefined && !holds.test(part)) continue;
      for (const m of pattern instanceof RegExp ? part.matchAll(pattern) : matchesOf(pattern, part)) {
        const key = m[1] ?? '';
        if (!isSecretKey(key)) continue;
        const group = valueGroups.find((g) => m[g] !== undefined);
        const value = group === undefined ? undefined : m[group];
        const at = group === undefined ? undefined : m.indices?.[group];
        if (value === undefined || !at || (!spaces && /\s/.test(value))) continue;
        if (plausibleSecret(value, key, mode(key)))
          add(from + at[0], from + at[1], kind, PRIORITY.assignment);
      }
    }
  };
}

/**
 * Every key isSecretKey accepts holds one of these, in any case (its words are lower-cased pieces of it, and each
 * accepted last word or suffix contains one).
 */
const SECRET_KEY_PART = /pass|pwd|secret|token|credential|key|dsn/gi;
/** Candidate lines closer than this are scanned as one part (one regex run instead of two). */
const JOIN_GAP = 512;
let linedText: string | undefined;
let lined: [number, number][] = [];

/**
 * The parts of a text the assignment rules need to read: the lines holding a secret-key word, each with the
 * newline before and after it, close ones joined. Why it is exact: no assignment pattern matches a newline, so
 * a scan of the whole text finds in each line what a scan of that line finds with one character of context on
 * each side (their lookarounds read no further across a newline), and a match whose key holds none of the words
 * is dropped anyway. Most text of a session is code and tool output without such a line.
 */
function secretKeyLines(text: string): [number, number][] {
  if (text === linedText) return lined;
  const parts: [number, number][] = [];
  SECRET_KEY_PART.lastIndex = 0;
  for (let m = SECRET_KEY_PART.exec(text); m !== null; m = SECRET_KEY_PART.exec(text)) {
    const lineStart = text.lastIndexOf('\n', m.index);
    let lineEnd = text.indexOf('\n', m.index);
    if (lineEnd === -1) lineEnd = text.length;
    const from = lineStart === -1 ? 0 : lineStart;
    const to = Math.min(lineEnd + 1, text.length);
    const last = parts.at(-1);
    if (last && from - last[1] < JOIN_GAP) last[1] = to;
    else parts.push([from, to]);
    SECRET_KEY_PART.lastIndex = to;
  }
  linedText = text;
  lined = parts;
  return parts;
}

const envMode = (key: string) => (isEnvName(key) ? 'env' : 'loose');
/** An assignment rule reads the given parts of a text whole; unless told, secretKeyLines and what each holds. */
type PartsDetector = (text: string, add: Add, parts?: readonly (readonly [number, number])[]) => void;
const assignmentRules: [gate: string[] | RegExp, PartsDetector][] = [
  [['='], assignments(ENV_LINE, [2, 3, 4, 5], envMode, 'env_secret')],
  [['='], assignments(ENV_INLINE, [2, 3, 4], () => 'env', 'env_secret')],
  // a separator, then (spaces and a backslash aside) the quote
  [/["'`]/, assignments(CONFIG_QUOTED, [3], () => 'config', 'config_secret', true, /[:=>][ \t]*\\?["'`]/)],
  [[':'], assignments(YAML_LINE, [2], envMode, 'config_secret', true, /:[ \t]/)],
  [['-'], assignments(CLI_FLAG, [3], () => 'config', 'config_secret')],
];
const assignmentDetectors: Detector[] = assignmentRules.map(([gate, detect]) => when(gate, detect));

/**
 * What the assignment rules find in a text, ungated: read by secretKeyLines and what each part must hold, as
 * export reads it, or (`whole`) every line, which must come to the same (test/export/redact-lines.test.ts).
 */
export function assignmentFindings(text: string, whole = false): Finding[] {
  const found: Finding[] = [];
  const add: Add = (start, end, kind, priority) => found.push({ start, end, kind, priority });
  for (const [, detect] of assignmentRules) detect(text, add, whole ? [[0, text.length]] : undefined);
  return found;
}

// --- Emails. Not: inside URL credentials (the url rule's), `git@host:` SSH remotes, `icon@2x.png`, a few
// machine senders that carry no person (Claude's co-author trailer).

// Anchored at each `@` (a regex starting with the local part would be tried at every letter of the text).
const EMAIL_DOMAIN_AT =
  /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|\.[A-Za-z0-9])/y;
const isLocalChar = (c: number) =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 46 ||
  c === 95 ||
  c === 37 ||
  c === 43 ||
  c === 45;
/** An ASCII letter or digit (a character code). */
export const isAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const MACHINE_EMAILS = new Set(['noreply@anthropic.com', 'noreply@github.com', 'noreply@openai.com']);

const emails: Detector = when(['@'], (text, add) => {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    // local part: up to 64 of [A-Za-z0-9._%+-], starting with a letter or digit, not glued to a longer run
    let start = at;
    while (start > 0 && at - start < 64 && isLocalChar(text.charCodeAt(start - 1))) start--;
    if (start === at || !isAlnum(text.charCodeAt(start))) continue;
    if (start > 0 && isLocalChar(text.charCodeAt(start - 1))) continue;
    EMAIL_DOMAIN_AT.lastIndex = at + 1;
    const domain = EMAIL_DOMAIN_AT.exec(text);
    if (!domain) continue;
    const end = EMAIL_DOMAIN_AT.lastIndex;
    const email = text.slice(start, end);
    const lower = email.toLowerCase();
    if (MACHINE_EMAILS.has(lower) || lower.startsWith('git@')) continue;
    if (/@\d+x\.(?:png|jpe?g|gif|webp|svg|avif)$/i.test(email)) continue;
    // userinfo of a URL (`scheme://user:pass@host`): look back to the start of the token
    if (/:\/\/[^\s/@"']*$/.test(text.slice(Math.max(0, start - 300), start))) continue;
    add(start, end, 'email', PRIORITY.email);
  }
});

// --- User names in home paths: /home/<user>/, /Users/<user>/, C:\Users\<user>\ (also C:/Users, C:\\Users in
// JSON-escaped text, /mnt/c/Users under WSL). The path must start there (after a space, quote, `=`, `:`, `(`…),
// so `src/api/Users/list.ts` or `pages/home/index.tsx` are not home paths. Only the user segment is replaced.

const HOME_BEFORE = /(?:^|[\s"'`=:([{,<>|;]|\\[nrt]|file:\/\/|\/mnt\/[a-z])$/;
/**
 * Whether a home path may start at `at` (HOME's lookbehind, tested on the 7 characters before it): the pattern
 * starts with `/home/`, `/Users/` or a drive letter, rare enough to find first. names.ts learns accounts by it.
 */
export const homePathMayStart = (text: string, at: number) =>
  HOME_BEFORE.test(text.slice(Math.max(0, at - 7), at));
const HOME = anchored(
  /(?<=^|[\s"'`=:([{,<>|;]|\\[nrt]|file:\/\/|\/mnt\/[a-z])/.source,
  /(?:\/home\/|\/Users\/|[A-Za-z]:(?:\\\\|\\|\/)Users(?:\\\\|\\|\/))([^\\/\s"'`:;,*?<>|[\](){}$%]+)/.source,
  'dg',
  homePathMayStart,
);
const NOT_USERS = new Set([
  'shared',
  'public',
  'default',
  'default user',
  'all users',
  'linuxbrew',
  'runner',
  'user',
  'username',
  'me',
  'you',
  'your-name',
  'yourname',
  'your_username',
  'name',
]);

const homes: Detector = when(/\/home\/|Users[\\/]/, (text, add) => {
  for (const m of matchesOf(HOME, text)) {
    const at = m.indices?.[1];
    let name = m[1] ?? '';
    if (!at) continue;
    name = name.replace(/\.+$/, ''); // end of a sentence: "… in /home/alice."
    if (
      name === '' ||
      NOT_USERS.has(name.toLowerCase()) ||
      /^user_\d+$/.test(name) ||
      name === '.' ||
      name === '..'
    ) {
      continue;
    }
    add(at[0], at[0] + name.length, 'home_user', PRIORITY.home);
  }
});

/** Our detectors, in no particular order (overlaps are decided by priority). */
export const DETECTORS: readonly Detector[] = [
  privateKeys,
  ...vendorTokens,
  jwts,
  ...authHeaders,
  urlCredentials,
  ...assignmentDetectors,
  emails,
  homes,
];
