import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/export/redact.js';
import { isSecretKey, plausibleSecret } from '../../src/export/rules.js';

// Redaction of secrets and personal data before export: one planted secret of each kind, inside the kind of tool
// output it turns up in, must not survive; placeholders are stable per secret; counts are per kind; ordinary code
// stays as it was. Test secrets are built at run time (right shape, random-looking, not real).

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';
const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const BASE64 = `${ALNUM}+/`;

/** A deterministic random-looking string: n characters of the alphabet, from a seed. */
function fake(n: number, alphabet = ALNUM, seed = 1): string {
  let x = (Math.imul(seed, 2654435761) ^ 0x9e3779b9) >>> 0 || 1;
  let out = '';
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

const pem = (label: string, body: string[], eol = '\n') =>
  [`-----BEGIN ${label}-----`, ...body, `-----END ${label}-----`].join(eol);

interface Planted {
  name: string;
  /** the counts key, and the placeholder `[REDACTED_<KIND>_n]` (home_user: `user_n`) */
  kind: string;
  /** what must not survive */
  secret: string;
  /** the tool output it is planted in */
  output: string;
}

const openai = `sk-proj-${fake(74, ALNUM, 2)}T3BlbkFJ${fake(74, ALNUM, 3)}`;
const anthropic = `sk-ant-api03-${fake(93, `${ALNUM}_-`, 4)}AA`;
const awsSecret = fake(40, `${ALNUM}/+`, 7);
const jwt = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0.${fake(43, `${ALNUM}_-`, 8)}`;
const rsaBody = Array.from({ length: 5 }, (_, i) => fake(64, BASE64, 20 + i));

const PLANTED: Planted[] = [
  {
    name: 'OpenAI key in `cat .env`',
    kind: 'openai_key',
    secret: openai,
    output: `# local settings\nOPENAI_API_KEY=${openai}\nLOG_LEVEL=debug\n`,
  },
  {
    name: 'OpenAI project key of a non-standard length (our looser rule)',
    kind: 'openai_key',
    secret: `sk-proj-${fake(40, ALNUM, 5)}`,
    output: `client = OpenAI(api_key="sk-proj-${fake(40, ALNUM, 5)}")`,
  },
  {
    name: 'Anthropic key in an SDK error',
    kind: 'anthropic_key',
    secret: anthropic,
    output: `AuthenticationError: 401 {"type":"error","error":{"message":"invalid x-api-key"}} key=${anthropic}`,
  },
  {
    name: 'Claude Code OAuth token in .credentials.json',
    kind: 'anthropic_key',
    secret: `sk-ant-oat01-${fake(60, `${ALNUM}_-`, 6)}`,
    output: `{"claudeAiOauth":{"accessToken":"sk-ant-oat01-${fake(60, `${ALNUM}_-`, 6)}","expiresAt":1760000000000}}`,
  },
  {
    name: 'GitHub token in `git remote -v`',
    kind: 'github_token',
    secret: `ghp_${fake(36, ALNUM, 9)}`,
    output: `origin\thttps://ghp_${fake(36, ALNUM, 9)}@github.com/acme/api.git (fetch)\norigin\thttps://ghp_${fake(36, ALNUM, 9)}@github.com/acme/api.git (push)`,
  },
  {
    name: 'GitHub fine-grained token in `gh auth status`',
    kind: 'github_token',
    secret: `github_pat_${fake(82, `${ALNUM}_`, 10)}`,
    output: `github.com\n  ✓ Logged in to github.com account octo (GH_TOKEN)\n  - Token: github_pat_${fake(82, `${ALNUM}_`, 10)}`,
  },
  {
    name: 'GitLab token in ~/.netrc',
    kind: 'gitlab_token',
    secret: `glpat-${fake(20, `${ALNUM}_-`, 11)}`,
    output: `machine gitlab.com login oauth2 password glpat-${fake(20, `${ALNUM}_-`, 11)}`,
  },
  {
    name: 'Slack bot token in a config file',
    kind: 'slack_token',
    secret: `xoxb-1234567890-1234567890123-${fake(24, ALNUM, 12)}`,
    output: `slack:\n  channel: "#deploys"\n  token: xoxb-1234567890-1234567890123-${fake(24, ALNUM, 12)}\n`,
  },
  {
    name: 'Slack webhook in a CI script',
    kind: 'slack_webhook',
    secret: `T0${fake(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 13)}/B0${fake(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 14)}/${fake(24, ALNUM, 15)}`,
    output: `curl -X POST -d '{"text":"done"}' https://hooks.slack.com/services/T0${fake(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 13)}/B0${fake(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 14)}/${fake(24, ALNUM, 15)}`,
  },
  {
    name: 'AWS access key id in `cat ~/.aws/credentials`',
    kind: 'aws_access_key_id',
    secret: `AKIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
    output: `[default]\naws_access_key_id = AKIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}\nregion = eu-west-1\n`,
  },
  {
    name: 'AWS secret access key in `cat ~/.aws/credentials` (secretlint reports a shifted range)',
    kind: 'aws_secret_key',
    secret: awsSecret,
    output: `[default]\naws_secret_access_key = ${awsSecret}\n`,
  },
  {
    name: 'Google API key in a Firebase config',
    kind: 'google_api_key',
    secret: `AIza${fake(35, `${ALNUM}_-`, 17)}`,
    output: `const firebaseConfig = {\n  apiKey: "AIza${fake(35, `${ALNUM}_-`, 17)}",\n  authDomain: "acme.firebaseapp.com",\n};`,
  },
  {
    name: 'Hugging Face token in `env`',
    kind: 'huggingface_token',
    secret: `hf_${fake(34, LETTERS, 18)}`,
    output: `PATH=/usr/bin\nHF_TOKEN=hf_${fake(34, LETTERS, 18)}\nTERM=xterm`,
  },
  {
    name: 'npm token in .npmrc',
    kind: 'npm_token',
    secret: `npm_${fake(36, ALNUM, 19)}`,
    output: `//registry.npmjs.org/:_authToken=npm_${fake(36, ALNUM, 19)}\nsave-exact=true`,
  },
  {
    name: 'Stripe live key in code',
    kind: 'stripe_key',
    secret: `sk_live_${fake(24, ALNUM, 21)}`,
    output: `const stripe = require('stripe')('sk_live_${fake(24, ALNUM, 21)}');`,
  },
  {
    name: 'SendGrid key (a secretlint-only rule)',
    kind: 'sendgrid_key',
    secret: `SG.${fake(22, ALNUM, 22)}.${fake(43, ALNUM, 23)}`,
    output: `sendgrid.setApiKey("SG.${fake(22, ALNUM, 22)}.${fake(43, ALNUM, 23)}")`,
  },
  {
    name: 'RSA key printed by `cat ~/.ssh/id_rsa`, body not a valid ASN.1 key',
    kind: 'private_key',
    secret: rsaBody[2] as string,
    output: pem('RSA PRIVATE KEY', rsaBody),
  },
  {
    name: 'OpenSSH key cut off by `head -3` (no END line)',
    kind: 'private_key',
    secret: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
    output:
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDdVx2Fh4Xe0fL1wAAAJiQ2n9xkNp/cQAAAAtzc2gtZWQyNTUxOQAAACD\n',
  },
  {
    name: 'JSON-escaped PEM inside a service-account JSON',
    kind: 'private_key',
    secret: `MIIEvQIBADANBgkqhkiG9w0BAQEFAASC${fake(40, BASE64, 24)}`,
    output: JSON.stringify(
      {
        type: 'service_account',
        private_key_id: fake(40, HEX, 25),
        private_key: `${pem('PRIVATE KEY', [`MIIEvQIBADANBgkqhkiG9w0BAQEFAASC${fake(40, BASE64, 24)}`, fake(64, BASE64, 26)])}\n`,
        client_email: 'deployer@acme-prod.iam.gserviceaccount.com',
      },
      null,
      2,
    ),
  },
  {
    name: 'JWT in an application log',
    kind: 'jwt',
    secret: jwt,
    output: `2025-01-12T10:00:00Z INFO auth: issued session token=${jwt} for user 42`,
  },
  {
    name: 'Bearer token (not a JWT) in an HTTP dump',
    kind: 'bearer_token',
    secret: fake(40, ALNUM, 27),
    output: `> GET /v1/items HTTP/1.1\n> Host: api.acme.dev\n> Authorization: Bearer ${fake(40, ALNUM, 27)}\n> Accept: */*`,
  },
  {
    name: 'Basic authorization header',
    kind: 'auth_header',
    secret: Buffer.from(`deploy:${fake(16, ALNUM, 28)}`).toString('base64'),
    output: `Authorization: Basic ${Buffer.from(`deploy:${fake(16, ALNUM, 28)}`).toString('base64')}`,
  },
  {
    name: 'X-Api-Key header in a curl -v trace',
    kind: 'auth_header',
    secret: fake(32, HEX, 29),
    output: `> POST /ingest HTTP/2\n> x-api-key: ${fake(32, HEX, 29)}\n> content-type: application/json`,
  },
  {
    name: '.env secret without a vendor shape',
    kind: 'env_secret',
    secret: fake(48, ALNUM, 30),
    output: `NODE_ENV=production\nSESSION_SECRET=${fake(48, ALNUM, 30)}\nPORT=3000`,
  },
  {
    name: 'exported env secret with quotes in a shell profile',
    kind: 'env_secret',
    secret: 'correct horse battery staple',
    output: `export BACKUP_PASSPHRASE="correct horse battery staple"`,
  },
  {
    name: 'inline env var in a command',
    kind: 'env_secret',
    secret: 'Zq7-hunter2-Xw9',
    output: `$ DB_PASSWORD=Zq7-hunter2-Xw9 npm run migrate`,
  },
  {
    name: 'secret in Django settings.py',
    kind: 'config_secret',
    secret: `django-insecure-${fake(30, ALNUM, 31)}`,
    output: `DEBUG = False\nSECRET_KEY = 'django-insecure-${fake(30, ALNUM, 31)}'\nALLOWED_HOSTS = ["*"]`,
  },
  {
    name: 'password in docker-compose.yml',
    kind: 'config_secret',
    secret: 'pg-Adm1n-2024!',
    output: `services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_PASSWORD: pg-Adm1n-2024!\n`,
  },
  {
    name: 'postgres URL with a password in config.yaml',
    kind: 'url_password',
    secret: 's3cr3tPassw0rd',
    output: `database:\n  url: postgres://admin:s3cr3tPassw0rd@db.internal:5432/app\n  pool: 10`,
  },
  {
    name: 'mysql URL in a stack trace',
    kind: 'url_password',
    secret: 'My$ql-pw-77',
    output: `Error: connect ECONNREFUSED (mysql://root:My$ql-pw-77@10.0.0.5:3306/shop)`,
  },
  {
    name: 'mongodb+srv URL',
    kind: 'url_password',
    secret: 'Mng0Pass99',
    output: `MONGO_URI=mongodb+srv://svc:Mng0Pass99@cluster0.ab1cd.mongodb.net/prod?retryWrites=true`,
  },
  {
    name: 'redis URL with an empty user',
    kind: 'url_password',
    secret: 'r3dis-pw-42',
    output: `REDIS_URL=redis://:r3dis-pw-42@cache.internal:6379/0`,
  },
  {
    name: 'amqp URL',
    kind: 'url_password',
    secret: 'rabbitPw31',
    output: `broker_url = "amqp://worker:rabbitPw31@mq.internal:5672/%2F"`,
  },
  {
    name: 'password containing @ in a URL',
    kind: 'url_password',
    secret: 'p@ss-w0rd',
    output: `git clone https://deploy:p@ss-w0rd@git.acme.dev/acme/api.git`,
  },
  {
    name: 'email in `git log`',
    kind: 'email',
    secret: 'jane.doe@example.org',
    output: `commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c\nAuthor: Jane Doe <jane.doe@example.org>\nDate:   Mon Jan 6 10:00:00 2025 +0100\n\n    Fix login`,
  },
  {
    name: 'user name in a Linux stack trace',
    kind: 'home_user',
    secret: '/home/alice',
    output: `Error: boom\n    at main (/home/alice/project/src/app.ts:12:5)\n    at /home/alice/project/node_modules/x/index.js:1:1`,
  },
  {
    name: 'user name in a macOS path',
    kind: 'home_user',
    secret: '/Users/alice',
    output: `ls: /Users/alice/Library/Caches: Permission denied`,
  },
  {
    name: 'user name in a Windows path, also JSON-escaped',
    kind: 'home_user',
    secret: 'alice',
    output: `C:\\Users\\alice\\proj> dir\n{"cwd":"C:\\\\Users\\\\alice\\\\proj"}`,
  },
];

const placeholderOf = (kind: string) =>
  kind === 'home_user' ? /user_\d+/ : new RegExp(`\\[REDACTED_${kind.toUpperCase()}_\\d+\\]`);

describe('every kind of planted secret is replaced', () => {
  it.each(PLANTED)('$name', ({ kind, secret, output }) => {
    expect(output).toContain(secret);
    const redactor = new Redactor();
    const out = redactor.redactText(output);
    expect(out).not.toContain(secret);
    expect(out).toMatch(placeholderOf(kind));
    expect(redactor.counts()[kind]).toBeGreaterThanOrEqual(1);
  });

  it('all of them at once, in one tool output: none survives, every kind is counted', () => {
    const redactor = new Redactor();
    const out = redactor.redactText(PLANTED.map((p) => p.output).join('\n\n'));
    for (const { secret } of PLANTED) expect(out).not.toContain(secret);
    expect(Object.keys(redactor.counts()).sort()).toEqual([...new Set(PLANTED.map((p) => p.kind))].sort());
  });

  it('in tool-call arguments (redactValue): a curl with a bearer token, a file written with a key', () => {
    const token = fake(40, ALNUM, 40);
    const args = {
      command: `curl -sS -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' https://api.acme.dev/v1/me`,
      description: 'Call the API',
    };
    const write = {
      file_path: '/home/alice/app/.env',
      content: `STRIPE_KEY=sk_live_${fake(24, ALNUM, 41)}\n`,
    };
    const redactor = new Redactor();
    const out = JSON.stringify([redactor.redactValue(args), redactor.redactValue(write)]);
    expect(out).not.toContain(token);
    expect(out).not.toContain(`sk_live_${fake(24, ALNUM, 41)}`);
    expect(out).not.toContain('alice');
    expect(out).toContain("'Authorization: Bearer [REDACTED_BEARER_TOKEN_1]'");
    expect(out).toContain('/home/user_1/app/.env');
    expect(redactor.counts()).toEqual({ bearer_token: 1, home_user: 1, stripe_key: 1 });
  });

  it('the markers of a private key stay, the body (and only it) goes, in raw and JSON-escaped form', () => {
    const redactor = new Redactor();
    expect(redactor.redactText(pem('EC PRIVATE KEY', ['abc/def+ghi=', 'jkl']))).toBe(
      '-----BEGIN EC PRIVATE KEY-----\n[REDACTED_PRIVATE_KEY_1]\n-----END EC PRIVATE KEY-----',
    );
    const escaped = JSON.stringify({ key: pem('PRIVATE KEY', ['xyz1', 'xyz2']) });
    expect(redactor.redactText(escaped)).toBe(
      '{"key":"-----BEGIN PRIVATE KEY-----\\n[REDACTED_PRIVATE_KEY_2]\\n-----END PRIVATE KEY-----"}',
    );
    expect(redactor.redactText(pem('PGP PRIVATE KEY BLOCK', ['', 'lQOYBF0', '=abcd']))).toContain(
      '[REDACTED_PRIVATE_KEY_3]',
    );
  });

  it('is not switched off by a `secretlint-disable` comment in the text', () => {
    const token = `ghp_${fake(36, ALNUM, 42)}`;
    const out = new Redactor().redactText(`// secretlint-disable\nconst t = "${token}";`);
    expect(out).not.toContain(token);
  });
});

describe('placeholders', () => {
  it('the same secret gets the same placeholder everywhere in the export, different ones get _1, _2', () => {
    const a = `ghp_${fake(36, ALNUM, 50)}`;
    const b = `ghp_${fake(36, ALNUM, 51)}`;
    const redactor = new Redactor();
    expect(redactor.redactText(`GITHUB_TOKEN=${a}`)).toBe('GITHUB_TOKEN=[REDACTED_GITHUB_TOKEN_1]');
    expect(redactor.redactText(`push with ${b}, then ${a}`)).toBe(
      'push with [REDACTED_GITHUB_TOKEN_2], then [REDACTED_GITHUB_TOKEN_1]',
    );
    expect(redactor.redactValue({ token: a })).toEqual({ token: '[REDACTED_GITHUB_TOKEN_1]' });
    // numbering is per kind, emails ignore case, home users are user_<n> per name
    expect(redactor.redactText('Jane.Doe@Example.org and jane.doe@example.org, bob@acme.io')).toBe(
      '[REDACTED_EMAIL_1] and [REDACTED_EMAIL_1], [REDACTED_EMAIL_2]',
    );
    expect(redactor.redactText('cd /home/bob/x && cp /Users/alice/y /home/bob/z')).toBe(
      'cd /home/user_1/x && cp /Users/user_2/y /home/user_1/z',
    );
  });

  it('a new Redactor starts numbering again (one per export run)', () => {
    const first = new Redactor();
    first.redactText('a@acme.io b@acme.io');
    expect(new Redactor().redactText('b@acme.io')).toBe('[REDACTED_EMAIL_1]');
  });

  it('is JSON-safe: a redacted JSON document still parses, to the same shape', () => {
    const doc = JSON.stringify({
      env: { DATABASE_URL: 'postgres://app:Pg-pw-2024x@db:5432/app', OWNER: 'ops@acme.io' },
      key: pem('RSA PRIVATE KEY', rsaBody),
      cwd: 'C:\\Users\\alice\\proj',
    });
    const out = new Redactor().redactText(doc);
    const parsed = JSON.parse(out);
    expect(Object.keys(parsed.env)).toEqual(['DATABASE_URL', 'OWNER']);
    expect(parsed.env.DATABASE_URL).toBe('postgres://app:[REDACTED_URL_PASSWORD_1]@db:5432/app');
    expect(parsed.env.OWNER).toBe('[REDACTED_EMAIL_1]');
    expect(parsed.key).toBe(pem('RSA PRIVATE KEY', ['[REDACTED_PRIVATE_KEY_1]']));
    expect(parsed.cwd).toBe('C:\\Users\\user_1\\proj');
    expect(out).not.toMatch(/\[REDACTED_[^\]]*["\\]/);
  });

  it('a value learned from its context is replaced where it later appears bare, with the same placeholder', () => {
    const redactor = new Redactor();
    expect(redactor.redactText('cat .env\nAPI_SECRET=Tq93vLx0pZ\nPORT=8080')).toBe(
      'cat .env\nAPI_SECRET=[REDACTED_ENV_SECRET_1]\nPORT=8080',
    );
    expect(redactor.redactText('The secret is Tq93vLx0pZ; rotate it.')).toBe(
      'The secret is [REDACTED_ENV_SECRET_1]; rotate it.',
    );
    // in the same text too, before and after
    expect(redactor.redactText('echo q8Wz-77-pass && export DB_PASS=q8Wz-77-pass')).toBe(
      'echo [REDACTED_ENV_SECRET_2] && export DB_PASS=[REDACTED_ENV_SECRET_2]',
    );
    // a value that could be a word is redacted where it is assigned, but not learned
    expect(redactor.redactText('POSTGRES_PASSWORD=postgres\nimage: postgres:16')).toBe(
      'POSTGRES_PASSWORD=[REDACTED_ENV_SECRET_3]\nimage: postgres:16',
    );
  });

  it('overlaps: the specific kind wins (vendor token in an env line, JWT after Bearer, key inside a PEM body)', () => {
    const redactor = new Redactor();
    const akia = `AKIA${fake(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 60)}`;
    expect(redactor.redactText(`Authorization: Bearer ${jwt}`)).toBe(
      'Authorization: Bearer [REDACTED_JWT_1]',
    );
    expect(redactor.redactText(pem('PRIVATE KEY', [`x${akia}`, 'AAAA']))).toBe(
      pem('PRIVATE KEY', ['[REDACTED_PRIVATE_KEY_1]']),
    );
    expect(redactor.counts()).toEqual({ jwt: 1, private_key: 1 });
  });
});

describe('counts', () => {
  it('counts every occurrence per kind, over the whole run, including repeats served from the cache', () => {
    const redactor = new Redactor();
    const email = 'ops@acme.io';
    const long = `${'log line\n'.repeat(40)}contact ${email} or ${email}\nat /home/alice/x.ts`;
    redactor.redactText(long);
    redactor.redactText(long); // a later model-turn sample repeating the same tool output
    redactor.redactValue({ to: [email], cc: { first: email } });
    expect(redactor.counts()).toEqual({ email: 6, home_user: 2 });
    expect(redactor.redactText(long)).toBe(
      `${'log line\n'.repeat(40)}contact [REDACTED_EMAIL_1] or [REDACTED_EMAIL_1]\nat /home/user_1/x.ts`,
    );
  });

  it('a cached text is looked at again once a new value has been learned', () => {
    const redactor = new Redactor();
    const long = `${'x '.repeat(200)}then ran: psql -W Kx82-pw-zz`;
    expect(redactor.redactText(long)).toBe(long);
    redactor.redactText('PGPASSWORD=Kx82-pw-zz');
    expect(redactor.redactText(long)).toBe(`${'x '.repeat(200)}then ran: psql -W [REDACTED_ENV_SECRET_1]`);
    expect(redactor.counts()).toEqual({ env_secret: 2 });
  });

  it('is empty when nothing was redacted', () => {
    const redactor = new Redactor();
    redactor.redactText('hello world');
    expect(redactor.counts()).toEqual({});
  });
});

describe('redactValue', () => {
  it('copies deeply, redacts strings at any depth, keeps other scalars and does not modify its input', () => {
    const token = `ghp_${fake(36, ALNUM, 70)}`;
    const input = {
      command: 'git push',
      env: { GH_TOKEN: token, DB_PASSWORD: 'Pa55-word-x', DEBUG: '1', TOKEN_LIMIT: 4096 },
      edits: [{ file_path: '/Users/alice/app/a.ts', old_string: 'a', new_string: 'b', replace_all: false }],
      nested: [[{ deep: [`mail bob@acme.io`] }]],
      nothing: null,
      apiKey: 'Zx81-live-Qw',
    };
    const frozen = structuredClone(input);
    const redactor = new Redactor();
    const out = redactor.redactValue(input);
    expect(input).toEqual(frozen);
    expect(out).toEqual({
      command: 'git push',
      env: {
        GH_TOKEN: '[REDACTED_GITHUB_TOKEN_1]',
        DB_PASSWORD: '[REDACTED_CONFIG_SECRET_1]',
        DEBUG: '1',
        TOKEN_LIMIT: 4096,
      },
      edits: [{ file_path: '/Users/user_1/app/a.ts', old_string: 'a', new_string: 'b', replace_all: false }],
      nested: [[{ deep: ['mail [REDACTED_EMAIL_1]'] }]],
      nothing: null,
      apiKey: '[REDACTED_CONFIG_SECRET_2]',
    });
    expect(out).not.toBe(input);
    expect((out as typeof input).edits).not.toBe(input.edits);
    expect(redactValueOf(true)).toBe(true);
    expect(redactValueOf(3.5)).toBe(3.5);
    expect(redactValueOf(null)).toBe(null);
  });

  it('keys are redacted only where they are data (paths, emails); parameter names stay', () => {
    const redactor = new Redactor();
    const out = redactor.redactValue({
      '/home/alice/a.ts': { old_string: 'x' },
      'jane@acme.io': 'owner',
      'Jane@acme.io': 'same person',
      file_path: '/tmp/x',
    });
    expect(out).toEqual({
      '/home/user_1/a.ts': { old_string: 'x' },
      '[REDACTED_EMAIL_1]': 'owner',
      '[REDACTED_EMAIL_1]_2': 'same person',
      file_path: '/tmp/x',
    });
  });

  it('a secret-named key gives context only to values that look like values', () => {
    const out = new Redactor().redactValue({
      password: `\${DB_PASSWORD}`,
      token: 'process.env.TOKEN',
      apiKey: 'YOUR_API_KEY',
      secret: '',
      max_tokens: 'abcdef123456',
      passwordHash: 'abcdef123456',
    });
    expect(out).toEqual({
      password: `\${DB_PASSWORD}`,
      token: 'process.env.TOKEN',
      apiKey: 'YOUR_API_KEY',
      secret: '',
      max_tokens: 'abcdef123456',
      passwordHash: 'abcdef123456',
    });
  });
});

const redactValueOf = (v: unknown) => new Redactor().redactValue(v);

describe('ordinary text is left alone', () => {
  const untouched = [
    'const token = getToken();',
    'const password = await prompt("Password: ");',
    'interface Credentials {\n  password: string;\n  apiKey?: string;\n  token: string | undefined;\n}',
    'def login(username, password=None):\n    token = auth.get_token(username, password)\n    return token',
    "if (!token) throw new Error('missing token');",
    'password: z.string().min(8),\napiKey: process.env.OPENAI_API_KEY,',
    `API_KEY=\${API_KEY}\nDB_PASSWORD=$DB_PASSWORD\nTOKEN=$(cat /run/secrets/token)`,
    'SECRET_KEY = os.environ["SECRET_KEY"]',
    'OPENAI_API_KEY=sk-...\nANTHROPIC_API_KEY=<your key>\nGITHUB_TOKEN=xxxxxxxxxxxx',
    '{"max_tokens": 4096, "token_type": "bearer", "key": "value", "secretName": "db-creds"}',
    '<input type="password" name="password" autocomplete="current-password">',
    'headers: { Authorization: `Bearer $' + '{token}` }',
    'Authorization: Bearer <token>',
    'commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c\nMerge: 1a2b3c4 5d6e7f8',
    'request id 123e4567-e89b-12d3-a456-426614174000, sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    `<img src="data:image/png;base64,${fake(2000, BASE64, 80)}==">`,
    'npm run task-runner -- --desk-top; pip install scikit-learn; see risk-assessment-2024-final-report-v3',
    'git remote add origin git@github.com:acme/api.git\nnpm i @types/node@20.11.0 lodash@4.17.21',
    '<img src="logo@2x.png"> and @Component({ selector: "app" })',
    'Co-Authored-By: Claude <noreply@anthropic.com>',
    'src/pages/home/index.tsx and app/api/Users/list.ts and ~/projects/x',
    'postgres://localhost:5432/app and postgres://user:password@localhost/db and https://example.com/a?b=c',
    "if (pem.startsWith('-----BEGIN PRIVATE KEY-----')) {\n  return parse(pem);\n}",
    'The token limit is 200k tokens; the password must be at least 12 characters.',
    'MAX_TOKEN=100\nTOKEN_TTL=3600\n{"token": "1712345678"}',
    `DATABASE_URL=postgres://app:\${DB_PASSWORD}@db:5432/app`,
    'export const PASSWORD_MIN_LENGTH = 12;\nexport const TOKEN_HEADER = "authorization";',
  ];
  it.each(untouched)('%s', (text) => {
    const redactor = new Redactor();
    expect(redactor.redactText(text)).toBe(text);
    expect(redactor.counts()).toEqual({});
  });
});

describe('rule helpers', () => {
  it('isSecretKey: the last word decides', () => {
    for (const key of [
      'password',
      'DB_PASSWORD',
      'accessToken',
      'client_secret',
      'X-Api-Key',
      'STRIPE_KEY',
      'SMTP_PASS',
    ])
      expect(isSecretKey(key), key).toBe(true);
    for (const key of [
      'key',
      'max_tokens',
      'token_type',
      'passwordHash',
      'secretName',
      'publicKey',
      'primary_key',
    ])
      expect(isSecretKey(key), key).toBe(false);
  });

  it('plausibleSecret: templates, placeholders, code and type names are not secrets', () => {
    for (const v of [
      `\${X}`,
      '$X',
      '{{ x }}',
      '<key>',
      'xxxx',
      '****',
      'your-api-key',
      'string',
      'getToken()',
      'a.b.c',
    ])
      expect(plausibleSecret(v, 'token', 'env'), v).toBe(false);
    expect(plausibleSecret('hunter2', 'password', 'loose')).toBe(true);
    expect(plausibleSecret('example', 'password', 'loose')).toBe(false);
  });
});
