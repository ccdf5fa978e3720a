// Places each corpus value as an agent session holds it: in a context (an `.env` line, unquoted YAML, a JSON
// string, a URL query, a curl header, a PEM file, a JSON-escaped key…) and a placement (the output of `cat` or of
// Claude Code's `Read`, with its `     N→` line numbers; the arguments of a `Write` or `Bash` call; a user
// prompt). Deterministic: the same corpus gives the same sessions. Used by the benchmark (run.mjs, through the
// CLI) and by test/export/redact-corpus.test.ts (in process).

export const PLACEMENTS = ['output-cat', 'output-read', 'arguments', 'prompt'];

const VENDOR_CONTEXTS = [
  'env',
  'yaml-unquoted',
  'json',
  'code',
  'url-query',
  'yaml-quoted',
  'cli-flag',
  'curl-header',
  'error-log',
  'bare',
  'diff',
  'env-inline',
  'url-query-encoded',
  'json-in-json',
];
const GENERIC_CONTEXTS = [
  'env',
  'yaml-unquoted',
  'json',
  'ini',
  'yaml-quoted',
  'toml',
  'code',
  'cli-flag',
  'diff',
];
const KEY_CONTEXTS = ['pem-file', 'json-escaped', 'yaml-block', 'pem-file', 'cut-off', 'json-in-json'];
const URL_CONTEXTS = ['source', 'env', 'yaml-unquoted', 'code', 'cli-flag'];

/** Identifier spellings of a vendor keyword: `stripe` → STRIPE_API_KEY, stripe_api_key, stripeApiKey. */
function names(keyword, entry) {
  if (entry.family === 'generic') {
    const k = entry.keyword;
    return { env: k.toUpperCase().replace(/[^A-Z0-9]+/g, '_'), snake: k, camel: k, label: 'app' };
  }
  const base =
    keyword
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'service';
  const camel = base.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  return {
    env: `${base.toUpperCase()}_API_KEY`,
    snake: `${base}_api_key`,
    camel: `${camel}ApiKey`,
    label: base,
  };
}

const numbered = (text) =>
  text
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}→${line}`)
    .join('\n');

const urlish = (entry) => entry.family === 'database-url' || entry.family === 'connection-string';

function contextsFor(entry) {
  if (entry.family === 'private-key') return KEY_CONTEXTS;
  if (entry.family === 'database-url' || entry.family === 'connection-string') return URL_CONTEXTS;
  if (entry.family === 'generic') return GENERIC_CONTEXTS;
  // detect-secrets' keyword lines are their own context (`if (api_key == "…")`)
  if (entry.kind === 'keyword') return ['source'];
  if (entry.text !== undefined)
    return ['source', ...VENDOR_CONTEXTS.slice(0, 4), 'source', ...VENDOR_CONTEXTS.slice(4)];
  return VENDOR_CONTEXTS;
}

/** The text of a file (or command, or paste) that holds the secret in the given context. */
function render(entry, context) {
  const s = entry.secret;
  const n = names(entry.keyword ?? 'service', entry);
  switch (context) {
    case 'source':
      return entry.text;
    case 'env':
      return `# ${n.label} settings\nNODE_ENV=production\n${n.env}=${entry.text !== undefined && entry.family !== 'trufflehog' ? entry.text : s}\nLOG_LEVEL=info\n`;
    case 'env-inline':
      return `${n.env}=${s} npm run sync -- --dry-run`;
    case 'yaml-unquoted':
      return `${n.label}:\n  endpoint: https://api.example.com\n  ${urlish(entry) ? 'url' : n.snake}: ${urlish(entry) ? entry.text : s}\n  timeout: 30\n`;
    case 'yaml-quoted':
      return `${n.label}:\n  enabled: true\n  ${n.snake}: "${s}"\n`;
    case 'json':
      return `{\n  "name": "worker",\n  "${n.camel}": "${s}",\n  "retries": 3\n}\n`;
    case 'json-in-json':
      if (entry.family === 'private-key')
        return JSON.stringify({ secret: JSON.stringify({ private_key: s }) });
      return JSON.stringify({ event: 'config', body: JSON.stringify({ [n.camel]: s, region: 'eu-west-1' }) });
    case 'ini':
      return `[${n.label}]\nhost = 10.0.0.4\n${n.snake} = ${s}\n`;
    case 'toml':
      return `[${n.label}]\nhost = "10.0.0.4"\n${n.snake} = "${s}"\n`;
    case 'code':
      if (urlish(entry)) return `engine = create_engine("${entry.text}")\n`;
      return `import { Client } from './client';\n\nexport const client = new Client({\n  ${n.camel}: '${s}',\n  timeout: 5000,\n});\n`;
    case 'cli-flag':
      if (urlish(entry)) return `psql "${entry.text}" -c 'select 1'`;
      return `${n.label.replace(/_/g, '-')}-cli deploy --region eu-west-1 --${entry.family === 'generic' ? n.snake.replace(/_/g, '-') : 'api-key'} ${s}`;
    case 'curl-header':
      return `curl -sS -H "Authorization: Bearer ${s}" -H 'Accept: application/json' https://api.example.com/v1/me`;
    case 'url-query':
      return `curl -s "https://api.example.com/v2/search?q=test&api_key=${s}&limit=5"`;
    case 'url-query-encoded':
      return `GET /v1/export?format=csv&token=${encodeURIComponent(s)} HTTP/1.1\nHost: api.example.com`;
    case 'error-log':
      return `2026-01-12T10:03:11.201Z ERROR [sync] request rejected (401): invalid credentials for key ${s}\n    at Sync.run (src/sync.ts:41:11)`;
    case 'bare':
      return `${s}\n`;
    case 'diff':
      return `diff --git a/.env.example b/.env.example\nindex 3b18e51..a9c2f70 100644\n--- a/.env.example\n+++ b/.env.example\n@@ -1,2 +1,3 @@\n NODE_ENV=development\n-${n.env}=\n+${n.env}=${s}\n`;
    case 'pem-file':
      return `${s}\n`;
    case 'json-escaped':
      return `{\n  "type": "service_account",\n  "project_id": "demo-42",\n  "private_key": ${JSON.stringify(`${s}\n`)},\n  "client_email": "svc@demo-42.iam.gserviceaccount.com"\n}\n`;
    case 'yaml-block':
      return `tls:\n  cert_file: /etc/ssl/app.crt\n  key: |\n${s
        .split('\n')
        .map((line) => `    ${line}`)
        .join('\n')}\n`;
    case 'cut-off':
      return `${s.split('\n').slice(0, 6).join('\n')}\n`;
    default:
      throw new Error(`unknown context ${context}`);
  }
}

const FILES = {
  env: '.env',
  'yaml-unquoted': 'config/app.yaml',
  'yaml-quoted': 'config/app.yaml',
  'yaml-block': 'deploy/values.yaml',
  json: 'config.json',
  'json-escaped': 'service-account.json',
  ini: 'settings.ini',
  toml: 'config.toml',
  code: 'src/client.ts',
  'pem-file': 'keys/id_private.pem',
  'cut-off': 'keys/id_private.pem',
};

/** A session holding `text` in a placement: { prompt, steps, answer } for a Claude Code transcript. */
function session(id, text, context, placement) {
  const file = `/work/app/${FILES[context] ?? 'notes.txt'}`;
  const commandish = ['cli-flag', 'curl-header', 'url-query', 'env-inline'].includes(context);
  const tag = `[case ${id}]`;
  if (placement === 'prompt')
    return { prompt: `${tag} Why does this fail?\n\n${text}`, steps: [], answer: 'Let me look.' };
  if (placement === 'arguments') {
    const call = commandish
      ? { name: 'Bash', input: { command: text, description: 'Run it' }, result: 'done' }
      : {
          name: 'Write',
          input: { file_path: file, content: text },
          result: `File created successfully at: ${file}`,
        };
    return {
      prompt: `${tag} Set it up.`,
      steps: [{ calls: [{ id: `toolu_${id}`, ...call }] }],
      answer: 'Done.',
    };
  }
  const call =
    placement === 'output-read'
      ? { name: 'Read', input: { file_path: file }, result: numbered(text.replace(/\n$/, '')) }
      : commandish
        ? { name: 'Bash', input: { command: 'tail -n 20 ~/.bash_history' }, result: text }
        : { name: 'Bash', input: { command: `cat ${file}` }, result: text };
  return {
    prompt: `${tag} Check the config.`,
    steps: [{ calls: [{ id: `toolu_${id}`, ...call }] }],
    answer: 'Looks fine.',
  };
}

/** Every corpus item placed: { id, kind, family, source, context, placement, secret|value, session }. */
export function placeCorpus(corpus) {
  const cases = [];
  corpus.secrets.forEach((entry, i) => {
    const contexts = contextsFor(entry);
    const context = contexts[i % contexts.length];
    const placement = PLACEMENTS[Math.floor(i / contexts.length + i) % PLACEMENTS.length];
    const text = render(entry, context);
    const forms = [entry.secret];
    if (context === 'url-query-encoded') forms.push(encodeURIComponent(entry.secret));
    cases.push({
      id: entry.id,
      type: 'secret',
      kind: entry.kind,
      family: entry.family,
      source: entry.source,
      context,
      placement,
      forms,
      session: session(entry.id, text, context, placement),
    });
  });
  corpus.lookalikes.forEach((entry, i) => {
    const placement = PLACEMENTS[i % PLACEMENTS.length];
    const text = entry.text ? entry.text.replaceAll('{v}', entry.value) : `${entry.value}\n`;
    cases.push({
      id: entry.id,
      type: 'lookalike',
      kind: entry.kind,
      family: 'look-alike',
      source: entry.source,
      context: 'as-found',
      placement,
      forms: [entry.value],
      session: session(entry.id, text, 'as-found', placement),
    });
  });
  return cases;
}

/**
 * What redaction sees of a placed case, as the export pipeline hands it over (clean.ts): the prompt and every
 * tool result as text, every call's arguments as a value. Returns the strings before and after.
 */
export function redactCase(redactor, placed) {
  const { session } = placed;
  const original = [session.prompt];
  const redacted = [redactor.redactText(session.prompt)];
  for (const step of session.steps)
    for (const call of step.calls) {
      original.push(...strings(call.input), call.result);
      redacted.push(...strings(redactor.redactValue(call.input)), redactor.redactText(call.result));
    }
  return { original, redacted };
}

/** Every string in a JSON-like value. */
export function strings(value, out = []) {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) strings(v, strings(k, out));
  return out;
}

/**
 * Whether a secret survives in the redacted strings: the whole secret, or (for secrets over 16 characters) any
 * 16-character piece of it that the original text did not also hold outside the secret — a token whose prefix
 * was replaced but whose random part stays is a leak. `original` and `redacted` are lists of strings.
 */
export function leaks(forms, original, redacted) {
  const out = redacted.join('\n\u0000\n');
  const before = original.join('\n\u0000\n');
  for (const form of forms) {
    if (out.includes(form)) return true;
    // PEM armour and header lines (`-----BEGIN …-----`, `Proc-Type:`) stay by design; the body must go
    const pieces = form.split(/\r?\n|\\n/).filter((p) => p.length > 0 && !/^-----|^[A-Za-z-]+: /.test(p));
    const elsewhere = pieces.length ? before.split(form).join('\u0000') : before;
    for (const piece of pieces) {
      if (piece.length <= 16) continue;
      for (let at = 0; at + 16 <= piece.length; at += 4) {
        const window = piece.slice(at, at + 16);
        if (out.includes(window) && !elsewhere.includes(window)) return true;
      }
    }
  }
  return false;
}

/** Whether a look-alike was altered: some occurrence of it in the original is gone from the redacted text. */
export function altered(value, original, redacted) {
  const count = (list) => list.reduce((n, s) => n + s.split(value).length - 1, 0);
  return count(redacted) < count(original);
}

/** A placed case as a Claude Code transcript (one user prompt, the calls with their results, an answer). */
export function transcript(c) {
  const lines = [];
  let parent = null;
  let n = 0;
  const envelope = (type, extra) => {
    n++;
    const uuid = `${c.id}-${n}`;
    lines.push({
      type,
      uuid,
      parentUuid: parent,
      sessionId: `case-${c.id}`,
      cwd: '/work/app',
      version: '2.1.50',
      timestamp: new Date(Date.UTC(2026, 0, 1, 10, 0, n)).toISOString(),
      isSidechain: false,
      ...extra,
    });
    parent = uuid;
  };
  const { session } = c;
  envelope('user', { message: { role: 'user', content: session.prompt } });
  session.steps.forEach((step, i) => {
    envelope('assistant', {
      message: {
        id: `msg_${c.id}_${i}`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: step.calls.map((call) => ({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: call.input,
        })),
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    });
    for (const call of step.calls)
      envelope('user', {
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: call.id, content: call.result }],
        },
      });
  });
  envelope('assistant', {
    message: {
      id: `msg_${c.id}_final`,
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: session.answer }],
      usage: { input_tokens: 10, output_tokens: 5 },
    },
  });
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}
