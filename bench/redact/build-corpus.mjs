#!/usr/bin/env node
// Builds the redaction corpus, test/fixtures/secrets/corpus.json, from the public test data of three secret
// scanners plus keys and credentials generated here, and the look-alikes that must come through unchanged.
// Deterministic for a seed (except the private keys, made by openssl/ssh-keygen/gpg: the file keeps them).
//
//   node bench/redact/build-corpus.mjs --gitleaks DIR --trufflehog DIR --detect-secrets DIR [--seed 1]
//
// Each DIR is a git directory (or clone) of github.com/gitleaks/gitleaks, trufflesecurity/trufflehog and
// Yelp/detect-secrets; the commits read are recorded in the corpus and in test/fixtures/secrets/SOURCES.md.
// - gitleaks (MIT): one sample per rule of config/gitleaks.toml at v8.28.0, generated from the rule's secret
//   group as gitleaks' own rule tests do (`secrets.NewSecret(regex)`), under the rule's keyword.
// - trufflehog (AGPL-3.0: only its test values are taken, as data): per detector, the first `want` value of
//   its pattern test that appears verbatim in the test's input, with that input.
// - detect-secrets (Apache-2.0): the values its plugin tests flag (`…, True`), the keyword plugin's test lines
//   with their secrets, and the values they must not flag (`…, False`) as look-alikes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { goToJs } from './go-regex.mjs';
import { groupSource, prng, sample } from './sample-regex.mjs';

const { values } = parseArgs({
  options: {
    gitleaks: { type: 'string' },
    trufflehog: { type: 'string' },
    'detect-secrets': { type: 'string' },
    'gitleaks-ref': { type: 'string', default: 'v8.28.0' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
  },
});
for (const need of ['gitleaks', 'trufflehog', 'detect-secrets']) {
  if (!values[need]) {
    process.stderr.write(`--${need} DIR is required (a git directory of that repository)\n`);
    process.exit(2);
  }
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = values.out ?? join(root, 'test/fixtures/secrets/corpus.json');
const random = prng(Number(values.seed) * 7919);

const git = (dir, ...args) =>
  execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
const gitDir = (dir) => {
  try {
    return resolve(
      dir,
      execFileSync('git', ['-C', dir, 'rev-parse', '--git-dir'], { encoding: 'utf8' }).trim(),
    );
  } catch {
    return dir;
  }
};

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const rand = (n, alphabet = ALNUM) => {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(random() * alphabet.length)];
  return s;
};
const pick = (list) => list[Math.floor(random() * list.length)];

const secrets = [];
const lookalikes = [];
const sources = {};

// ---------------------------------------------------------------------------------------------------------------
// gitleaks

{
  const dir = gitDir(values.gitleaks);
  const ref = values['gitleaks-ref'];
  const commit = git(dir, 'rev-parse', `${ref}^{commit}`).trim();
  sources.gitleaks = {
    repository: 'github.com/gitleaks/gitleaks',
    commit,
    ref,
    path: 'config/gitleaks.toml',
    licence: 'MIT',
  };
  const config = parseToml(git(dir, 'show', `${commit}:config/gitleaks.toml`));
  for (const rule of config.rules) {
    if (!rule.regex || rule.path) continue;
    const group = groupSource(rule.regex, rule.secretGroup ?? 1) ?? rule.regex;
    // the first alternative's group when a rule is several regexes joined with `|`
    const keyword = (rule.keywords ?? [rule.id.split('-')[0]])[0];
    const full = new RegExp(goToJs(rule.regex.replace(/^\(\?i\)\[\\w\.-\]\{0,50\}\?/, '(?i)')));
    let secret;
    for (let attempt = 0; attempt < 20 && secret === undefined; attempt++) {
      const candidate = sample(group, random);
      if (candidate.length < 8 || /\s/.test(candidate)) continue;
      // gitleaks' GenerateSampleSecret line: the sample must be one the rule itself finds
      if (full.test(`${keyword}_api_token = "${candidate}"`) || full.test(candidate)) secret = candidate;
    }
    if (secret === undefined) continue;
    secrets.push({ source: 'gitleaks', kind: rule.id, keyword, secret });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// trufflehog

/** Go string literals of a file, in order: [value, start offset]. */
function goStrings(text) {
  const found = [];
  const re = /`([^`]*)`|"((?:[^"\\\n]|\\.)*)"/g;
  for (const m of text.matchAll(re)) {
    let value = m[1];
    if (value === undefined) {
      try {
        value = JSON.parse(`"${m[2]}"`);
      } catch {
        continue;
      }
    }
    found.push([value, m.index]);
  }
  return found;
}

{
  const dir = gitDir(values.trufflehog);
  const commit = git(dir, 'rev-parse', 'HEAD').trim();
  sources.trufflehog = {
    repository: 'github.com/trufflesecurity/trufflehog',
    commit,
    path: 'pkg/detectors/*/*_test.go',
    licence: 'AGPL-3.0 (test values taken as data)',
  };
  const files = git(dir, 'ls-tree', '-r', '--name-only', commit, 'pkg/detectors')
    .split('\n')
    .filter((f) => f.endsWith('_test.go') && !f.includes('integration'));
  for (const file of files) {
    const text = git(dir, 'show', `${commit}:${file}`);
    const vars = new Map();
    for (const m of text.matchAll(/(\w+)\s*(?::=|=)\s*(`[^`]*`|"(?:[^"\\\n]|\\.)*")/g)) {
      const [lit] = goStrings(m[2]);
      if (lit) vars.set(m[1], lit[0]);
    }
    const literals = goStrings(text).map(([v]) => v);
    let taken;
    for (const want of text.matchAll(/want:\s*\[\]string\{([^}]*)\}/g)) {
      for (const item of want[1]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const value = /^[`"]/.test(item) ? goStrings(item)[0]?.[0] : vars.get(item);
        if (!value || /\s/.test(value) || value.length < 12 || value.length > 400) continue;
        // not a bare URL or a field name (some tests want the endpoint or the key name back)
        if (/^[a-z]+:\/\/[^@]*$/i.test(value) || /^[A-Za-z_]+$/.test(value)) continue;
        if (/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(value) || /^[a-z-]+(?:\.[a-z-]+)+$/.test(value)) continue;
        const input = literals.find((l) => l !== value && l.length > value.length && l.includes(value));
        if (!input) continue;
        taken = { value, input };
        break;
      }
      if (taken) break;
    }
    if (!taken) continue;
    const detector = file.split('/')[2];
    secrets.push({
      source: 'trufflehog',
      kind: detector,
      keyword: detector,
      secret: taken.value,
      text: taken.input
        .replace(/^\n/, '')
        .replace(/^\t+/gm, (tabs) => '  '.repeat(Math.max(0, tabs.length - 2))),
      path: file,
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// detect-secrets

/** Python string literals of a snippet: '…' or "…" with the usual escapes. */
function pyString(literal) {
  const body = literal.slice(1, -1);
  return body.replace(/\\(['"\\nt])/g, (_, c) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

{
  const dir = gitDir(values['detect-secrets']);
  const commit = git(dir, 'rev-parse', 'HEAD').trim();
  sources['detect-secrets'] = {
    repository: 'github.com/Yelp/detect-secrets',
    commit,
    path: 'tests/plugins/*_test.py',
    licence: 'Apache-2.0',
  };
  const files = git(dir, 'ls-tree', '-r', '--name-only', commit, 'tests/plugins')
    .split('\n')
    .filter((f) => f.endsWith('_test.py'));
  for (const file of files) {
    const plugin = file
      .split('/')
      .at(-1)
      .replace(/_test\.py$/, '');
    if (plugin === 'base' || plugin === 'high_entropy_strings' || plugin === 'ip_public') continue;
    const text = git(dir, 'show', `${commit}:${file}`);
    if (plugin === 'keyword') {
      const constants = new Map();
      for (const m of text.matchAll(/^([A-Z_]+) = ('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")$/gm))
        constants.set(m[1], pyString(m[2]));
      const cases = /\(\s*('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")\.format\((\w+)\)\s*,\s*(\w+)\s*\)/g;
      const seen = new Set();
      for (const m of text.matchAll(cases)) {
        const secret = constants.get(m[2]);
        if (m[3] === 'None' || secret === undefined) continue;
        const line = pyString(m[1]).replace(/\{\}/, secret).replace(/\{\{/g, '{').replace(/\}\}/g, '}');
        if (seen.has(line)) continue;
        seen.add(line);
        secrets.push({
          source: 'detect-secrets',
          kind: 'keyword',
          keyword: 'keyword',
          secret,
          text: line,
          path: file,
        });
      }
      continue;
    }
    for (const m of text.matchAll(/('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")\s*,\s*(True|False)\b/g)) {
      const value = pyString(m[1]);
      if (value.length < 8 || value.includes('{}')) continue;
      // flagged test strings that are placeholders or fragments (`AP6xxxxxxxxxx`, `=AKCxxxx`, `user:password`)
      if (m[2] === 'True' && /_authToken=\s*/.test(value)) {
        secrets.push({
          source: 'detect-secrets',
          kind: plugin,
          keyword: plugin,
          secret: value.replace(/^.*_authToken=\s*/, ''),
          text: value,
          path: file,
        });
        continue;
      }
      if (m[2] === 'True' && /x{6,}|:password@|^[\s="']|^[\w-]+:[A-Z]/.test(value)) continue;
      if (m[2] === 'True')
        secrets.push({ source: 'detect-secrets', kind: plugin, keyword: plugin, secret: value, path: file });
      // A negative of one plugin is often a real secret of another shape (a UUID npm token, a near-miss
      // Discord token): only the negatives that are references or placeholders are look-alikes.
      else if (/\$|%s|insert_key_here|x{4,}|<[^>]*>|fake|not_long_enough|notapassword/.test(value))
        lookalikes.push({ source: 'detect-secrets', kind: `${plugin}-negative`, value, path: file });
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Generated here: private keys, database URLs, connection strings, generic assignments, encoded credentials

{
  const tmp = mkdtempSync(join(tmpdir(), 'redact-keys-'));
  const run = (cmd, args, opts = {}) =>
    execFileSync(cmd, args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'], ...opts });
  const keys = [];
  const openssl = (name, args) => keys.push([name, run('openssl', args)]);
  openssl('rsa-pkcs8', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']);
  keys.push(['rsa-pkcs1', run('openssl', ['rsa', '-traditional'], { input: keys[0][1] })]);
  keys.push([
    'rsa-pkcs1-encrypted',
    run('openssl', ['rsa', '-traditional', '-aes128', '-passout', 'pass:x'], { input: keys[0][1] }),
  ]);
  keys.push([
    'pkcs8-encrypted',
    run('openssl', ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-passout', 'pass:x'], { input: keys[0][1] }),
  ]);
  openssl('ec-pkcs8', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']);
  keys.push(['ec-sec1', run('openssl', ['ec'], { input: keys.at(-1)[1] })]);
  openssl('ed25519', ['genpkey', '-algorithm', 'ED25519']);
  openssl('x25519', ['genpkey', '-algorithm', 'X25519']);
  const dsaParams = join(tmp, 'dsa.pem');
  run('openssl', [
    'genpkey',
    '-genparam',
    '-algorithm',
    'DSA',
    '-pkeyopt',
    'dsa_paramgen_bits:1024',
    '-out',
    dsaParams,
  ]);
  keys.push([
    'dsa',
    run('openssl', ['dsa'], { input: run('openssl', ['genpkey', '-paramfile', dsaParams]) }),
  ]);
  for (const type of ['ed25519', 'rsa', 'ecdsa']) {
    const file = join(tmp, `id_${type}`);
    run('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'dev@example.com', '-f', file]);
    keys.push([`openssh-${type}`, readFileSync(file, 'utf8')]);
  }
  const home = join(tmp, 'gpg');
  run('mkdir', ['-m', '700', home]);
  run('gpg', [
    '--homedir',
    home,
    '--batch',
    '--pinentry-mode',
    'loopback',
    '--passphrase',
    '',
    '--quick-gen-key',
    'Dev <dev@example.com>',
    'ed25519',
    'sign',
    'never',
  ]);
  keys.push([
    'pgp',
    run('gpg', [
      '--homedir',
      home,
      '--batch',
      '--pinentry-mode',
      'loopback',
      '--passphrase',
      '',
      '--armor',
      '--export-secret-keys',
    ]),
  ]);
  rmSync(tmp, { recursive: true, force: true });
  for (const [name, pem] of keys)
    secrets.push({
      source: 'generated',
      kind: `private-key-${name}`,
      keyword: 'key',
      secret: pem.trim(),
      family: 'private-key',
    });

  const password = () =>
    pick([
      rand(16),
      `${pick(['Summer', 'Orange', 'Falcon', 'Maple'])}${rand(4, '0123456789')}${pick(['!', '*', '$', '%'])}`,
      rand(24, `${ALNUM}!%^*-_`),
      rand(12),
    ]);
  const dbs = [
    ['postgres', (p) => `postgres://app:${p}@db.internal:5432/app`],
    ['postgresql', (p) => `postgresql://admin:${p}@10.0.3.12/orders?sslmode=require`],
    ['mysql', (p) => `mysql://root:${p}@localhost:3306/shop`],
    ['mongodb-srv', (p) => `mongodb+srv://svc:${p}@cluster0.ab12c.mongodb.net/prod?retryWrites=true`],
    ['redis', (p) => `redis://default:${p}@cache.example.net:6379/0`],
    ['amqp', (p) => `amqp://guest:${p}@rabbit:5672/vhost`],
    ['mssql', (p) => `mssql://sa:${p}@sqlserver:1433/master`],
    ['smtp', (p) => `smtp://mailer:${p}@smtp.mailgun.org:587`],
  ];
  for (let n = 0; n < 3; n++)
    for (const [kind, url] of dbs) {
      const secret = password();
      secrets.push({
        source: 'generated',
        kind: `database-url-${kind}`,
        keyword: 'database',
        secret,
        text: url(secret),
        family: 'database-url',
      });
    }
  const conns = [
    [
      'jdbc-sqlserver',
      (p) =>
        `jdbc:sqlserver://db.corp.local:1433;databaseName=Sales;user=svc_sales;password=${p};encrypt=true`,
    ],
    ['jdbc-mysql', (p) => `jdbc:mysql://mysql.internal:3306/app?user=app&password=${p}&useSSL=true`],
    ['jdbc-postgresql', (p) => `jdbc:postgresql://pg.internal:5432/app?user=app&password=${p}`],
    [
      'adonet',
      (p) =>
        `Server=tcp:sql01.database.windows.net,1433;Initial Catalog=crm;User ID=crmadmin;Password=${p};Encrypt=True;`,
    ],
    ['adonet-pwd', (p) => `Data Source=SQL02;Initial Catalog=hr;User Id=hr_app;Pwd=${p};`],
    ['libpq', (p) => `host=pg.internal port=5432 dbname=app user=app password=${p} sslmode=require`],
    ['odbc', (p) => `Driver={ODBC Driver 18 for SQL Server};Server=sql03;Database=ops;Uid=ops;Pwd=${p};`],
    ['oracle', (p) => `User Id=scott;Password=${p};Data Source=orcl.example.com:1521/ORCLPDB1`],
    [
      'redis-stackexchange',
      (p) => `cache.redis.cache.windows.net:6380,password=${p},ssl=True,abortConnect=False`,
    ],
    [
      'azure-storage',
      (p) =>
        `DefaultEndpointsProtocol=https;AccountName=acct01;AccountKey=${p};EndpointSuffix=core.windows.net`,
    ],
  ];
  for (const [kind, conn] of conns) {
    const secret = kind === 'azure-storage' ? `${rand(86, `${ALNUM}+/`)}==` : password();
    secrets.push({
      source: 'generated',
      kind: `connection-string-${kind}`,
      keyword: 'connection',
      secret,
      text: conn(secret),
      family: 'connection-string',
    });
  }
  const keys2 = [
    'DB_PASSWORD',
    'api_key',
    'apiKey',
    'SECRET_KEY',
    'client_secret',
    'auth_token',
    'password',
    'SMTP_PASS',
    'JWT_SECRET',
    'accessToken',
    'private_key',
    'REDIS_PASSWORD',
    'ENCRYPTION_KEY',
    'passwd',
    'token',
  ];
  for (let n = 0; n < 4; n++)
    for (const key of keys2) {
      const secret = pick([
        rand(32),
        rand(24, '0123456789abcdef'),
        password(),
        `${rand(8)}-${rand(8)}-${rand(8)}`,
        rand(40, `${ALNUM}/+`),
      ]);
      secrets.push({
        source: 'generated',
        kind: 'generic-assignment',
        keyword: key,
        secret,
        family: 'generic',
      });
    }
  // credentials kept in base64 (docker config.json, kubeconfig, .npmrc `_auth`, Basic auth, a base64 .env)
  const b64 = (s) => Buffer.from(s).toString('base64');
  for (let n = 0; n < 3; n++) {
    const pass = password();
    secrets.push({
      source: 'generated',
      kind: 'docker-config-auth',
      keyword: 'auth',
      secret: b64(`deploy:${pass}`),
      text: JSON.stringify({ auths: { 'registry.example.com': { auth: b64(`deploy:${pass}`) } } }, null, 2),
      family: 'encoded',
    });
    const npm = password();
    secrets.push({
      source: 'generated',
      kind: 'npmrc-auth',
      keyword: '_auth',
      secret: b64(`ci:${npm}`),
      text: `registry=https://npm.example.com/\n_auth=${b64(`ci:${npm}`)}\nalways-auth=true`,
      family: 'encoded',
    });
    const basic = password();
    secrets.push({
      source: 'generated',
      kind: 'basic-auth-header',
      keyword: 'authorization',
      secret: b64(`admin:${basic}`),
      text: `GET /api/v1/status HTTP/1.1\nHost: internal.example.com\nAuthorization: Basic ${b64(`admin:${basic}`)}\nAccept: */*`,
      family: 'encoded',
    });
    const env = `DATABASE_URL=postgres://app:${password()}@db/app\nSTRIPE_SECRET_KEY=sk_live_${rand(24)}\n`;
    secrets.push({
      source: 'generated',
      kind: 'base64-env',
      keyword: 'env',
      secret: b64(env),
      text: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\ndata:\n  .env: ${b64(env)}`,
      family: 'encoded',
    });
    const pemKey = keys[n % keys.length][1];
    secrets.push({
      source: 'generated',
      kind: 'kubeconfig-client-key',
      keyword: 'client-key-data',
      secret: b64(pemKey),
      text: `apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-certificate-data: ${b64('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')}\n    client-key-data: ${b64(pemKey)}`,
      family: 'encoded',
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Look-alikes: values with a secret's look that are not secrets

{
  const hex = '0123456789abcdef';
  const uuid = () =>
    `${rand(8, hex)}-${rand(4, hex)}-4${rand(3, hex)}-${pick(['8', '9', 'a', 'b'])}${rand(3, hex)}-${rand(12, hex)}`;
  const add = (kind, value, text) =>
    lookalikes.push({ source: 'generated', kind, value, ...(text ? { text } : {}) });
  for (let n = 0; n < 40; n++)
    add('uuid', uuid(), pick([`"id": "{v}"`, `request_id={v}`, `session {v} started`, `trace-id: {v}`]));
  for (let n = 0; n < 40; n++)
    add(
      'git-sha',
      rand(40, hex),
      pick([
        `commit {v}\nAuthor: Dev <dev@example.com>`,
        `"sha": "{v}"`,
        `HEAD is now at {v}`,
        `resolved: {v}`,
      ]),
    );
  for (let n = 0; n < 20; n++) add('git-short-sha', rand(7, hex), `{v} fix: handle empty input`);
  for (let n = 0; n < 30; n++)
    add('lockfile-integrity', `sha512-${rand(86, `${ALNUM}+/`)}==`, `"integrity": "{v}"`);
  for (let n = 0; n < 20; n++)
    add('lockfile-sha1', rand(40, hex), `  resolved "https://registry.yarnpkg.com/pkg/-/pkg-1.2.3.tgz#{v}"`);
  for (let n = 0; n < 20; n++) add('sha256-digest', `sha256:${rand(64, hex)}`, `"digest": "{v}"`);
  for (let n = 0; n < 30; n++)
    add('css-colour', `#${rand(6, hex)}`, pick([`  color: {v};`, `background: {v}`, `--accent: {v};`]));
  const words =
    'the quick brown fox jumps over the lazy dog while a build runs tests and lints every file in the repository'.split(
      ' ',
    );
  for (let n = 0; n < 30; n++) {
    const sentence = Array.from({ length: 8 + Math.floor(random() * 10) }, () => pick(words)).join(' ');
    add(
      'base64-of-text',
      Buffer.from(sentence).toString('base64'),
      pick([`data: {v}`, `"payload": "{v}"`, `echo {v} | base64 -d`]),
    );
  }
  for (let n = 0; n < 20; n++) add('number-id', rand(18, '0123456789'), `"channel_id": "{v}"`);
  for (let n = 0; n < 10; n++) add('checksum-md5', rand(32, hex), `{v}  dist/app.tar.gz`);
  const placeholders = [
    ['aws-example', 'AKIAIOSFODNN7EXAMPLE', 'aws_access_key_id = {v}'],
    ['aws-example-secret', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key = {v}'],
    ['openai-placeholder', 'sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'OPENAI_API_KEY={v}'],
    ['openai-placeholder', 'sk-...', 'export OPENAI_API_KEY={v}'],
    ['github-placeholder', 'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'GITHUB_TOKEN={v}'],
    ['github-placeholder', 'ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX', 'token: {v}'],
    ['stripe-placeholder', 'sk_test_xxxxxxxxxxxxxxxxxxxxxxxx', 'STRIPE_SECRET_KEY={v}'],
    ['slack-placeholder', 'xoxb-your-bot-token', 'SLACK_BOT_TOKEN={v}'],
    ['doc-placeholder', 'your-api-key-here', 'API_KEY={v}'],
    ['doc-placeholder', '<YOUR_API_KEY>', 'curl -H "Authorization: Bearer {v}" https://api.example.com'],
    ['doc-placeholder', 'YOUR_TOKEN_HERE', 'token = "{v}"'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, the look-alike itself
    ['doc-placeholder', '${API_TOKEN}', 'Authorization: Bearer {v}'],
    ['doc-placeholder', '{{ secrets.NPM_TOKEN }}', 'NODE_AUTH_TOKEN: {v}'],
    ['doc-placeholder', 'changeme', 'DB_PASSWORD={v}'],
    ['doc-placeholder', '********', 'password: {v}'],
    ['doc-placeholder', 'process.env.API_KEY', 'const apiKey = {v};'],
    ['doc-placeholder', 'os.environ["SECRET_KEY"]', 'SECRET_KEY = {v}'],
    ['doc-placeholder', 'getPassword()', 'password = {v}'],
    ['doc-placeholder', '$DB_PASSWORD', 'psql "postgres://app:{v}@localhost/app"'],
    ['doc-placeholder', 'REPLACE_ME', 'client_secret: {v}'],
    ['doc-placeholder', 'xxxx-xxxx-xxxx-xxxx', 'license_key = "{v}"'],
    ['jwt-placeholder', 'eyJhbGciOi...', 'Authorization: Bearer {v}'],
    ['code', 'token_type', '"token_type": "bearer"'],
    ['code', 'max_tokens', 'max_tokens = 4096'],
    ['code', 'passwordHash', 'const passwordHash = await bcrypt.hash(password, 10);'],
    ['code', 'SecretName', 'secretName: app-secrets'],
    ['code', 'keyof', 'type K = keyof typeof config;'],
    ['code', 'useAuthToken', 'const token = useAuthToken();'],
  ];
  for (const [kind, value, text] of placeholders) add(kind, value, text);
}

const corpus = {
  about: 'Redaction corpus: see bench/redact/build-corpus.mjs and test/fixtures/secrets/SOURCES.md',
  seed: Number(values.seed),
  sources,
  secrets: secrets.map((s, i) => ({ id: `s${i + 1}`, family: s.family ?? s.source, ...s })),
  lookalikes: lookalikes.map((l, i) => ({ id: `l${i + 1}`, ...l })),
};
writeFileSync(out, `${JSON.stringify(corpus, null, 1)}\n`);
const count = (list, key) => {
  const n = new Map();
  for (const x of list) n.set(x[key], (n.get(x[key]) ?? 0) + 1);
  return [...n].map(([k, v]) => `${k} ${v}`).join(', ');
};
process.stderr.write(
  `${corpus.secrets.length} secrets (${count(corpus.secrets, 'source')}), ${corpus.lookalikes.length} look-alikes -> ${out}\n`,
);
