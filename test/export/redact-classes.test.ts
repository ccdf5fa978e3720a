import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/export/redact.js';

// The miss classes of issue 20, each placed as an agent session holds it: in a tool's output (Claude Code's
// `Read`, with its `     N→` line numbers, where the class is about a file), in a tool call's arguments (a `Write`
// of the file, as export hands arguments over: a value) and in a user prompt (pasted). The secret must be gone,
// not even a 16-character piece of it left, and the text around it must stay as it was. Secrets are built at run
// time (right shape, random-looking, not real). Redactor is what export calls (clean.ts: redactText for
// contents and results, redactValue for arguments).

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const BASE64 = `${ALNUM}+/`;

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

/** Claude Code `Read` output: each line prefixed with its number, right-aligned in 6, and `→`. */
const numbered = (text: string) =>
  text
    .replace(/\n$/, '')
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(6)}→${line}`)
    .join('\n');

/** Whether the secret, or any 16-character piece of it, is still in the text. */
function leaks(secret: string, text: string): boolean {
  if (text.includes(secret)) return true;
  for (const piece of secret.split(/\r?\n/)) {
    if (/^-----/.test(piece)) continue; // PEM armour stays by design
    for (let at = 0; at + 16 <= piece.length; at += 4)
      if (text.includes(piece.slice(at, at + 16))) return true;
  }
  return false;
}

interface Class {
  name: string;
  file: string;
  /** the file's text */
  text: string;
  /** what must go (each) */
  secrets: string[];
  /** what must stay */
  kept: string[];
}

const keyBody = Array.from({ length: 6 }, (_, i) => fake(64, BASE64, 30 + i));
const privateKey = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  ...keyBody,
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');
const envToken = fake(40, ALNUM, 40);
const envPassword = `${fake(12, ALNUM, 41)}!${fake(6, ALNUM, 42)}`;
const yamlKey = fake(32, `${ALNUM}_-`, 43);
const queryToken = fake(36, ALNUM, 44);
const jdbcPassword = fake(18, ALNUM, 45);
const adoPassword = fake(20, ALNUM, 46);
const libpqPassword = fake(16, ALNUM, 47);
const pemBody = Array.from({ length: 5 }, (_, i) => `MII${fake(61, BASE64, 50 + i)}`);
const pkcs8 = ['-----BEGIN PRIVATE KEY-----', ...pemBody, '-----END PRIVATE KEY-----', ''].join('\n');
const dockerPassword = fake(24, ALNUM, 48);
const dockerAuth = Buffer.from(`deploy-bot:${dockerPassword}`).toString('base64');

const CLASSES: Class[] = [
  {
    name: 'a private key file',
    file: '/home/dev/.ssh/id_ed25519',
    text: `${privateKey}\n`,
    secrets: keyBody,
    kept: ['-----BEGIN OPENSSH PRIVATE KEY-----', '-----END OPENSSH PRIVATE KEY-----'],
  },
  {
    name: 'an .env file',
    file: '/work/app/.env',
    text: `# service settings\nNODE_ENV=production\nSERVICE_API_TOKEN=${envToken}\nDB_PASSWORD=${envPassword}\nLOG_LEVEL=info\n`,
    secrets: [envToken, envPassword],
    kept: [
      '# service settings',
      'NODE_ENV=production',
      'SERVICE_API_TOKEN=',
      'DB_PASSWORD=',
      'LOG_LEVEL=info',
    ],
  },
  {
    name: 'an unquoted YAML value',
    file: '/work/app/config/app.yaml',
    text: `billing:\n  endpoint: https://api.example.com\n  api_key: ${yamlKey}\n  timeout: 30\n`,
    secrets: [yamlKey],
    kept: ['billing:', '  endpoint: https://api.example.com', '  api_key: ', '  timeout: 30'],
  },
  {
    name: 'a token in a URL query',
    file: '/work/app/scripts/sync.sh',
    text: `curl -s "https://api.example.com/v2/search?q=test&api_key=${queryToken}&limit=5"\n`,
    secrets: [queryToken],
    kept: ['curl -s "https://api.example.com/v2/search?q=test&api_key=', '&limit=5"'],
  },
  {
    name: 'connection strings with a password parameter (JDBC, ADO.NET, libpq)',
    file: '/work/app/conf/datasources.txt',
    text:
      `jdbc:sqlserver://db.internal:1433;databaseName=app;user=sa;password=${jdbcPassword};encrypt=true\n` +
      `Server=tcp:db.internal,1433;Database=app;User ID=app;Password=${adoPassword};Encrypt=True;\n` +
      `host=db.internal port=5432 dbname=app user=app password=${libpqPassword} sslmode=require\n`,
    secrets: [jdbcPassword, adoPassword, libpqPassword],
    kept: [
      'jdbc:sqlserver://db.internal:1433;databaseName=app;user=sa;password=',
      ';encrypt=true',
      'Server=tcp:db.internal,1433;Database=app;User ID=app;Password=',
      ';Encrypt=True;',
      'host=db.internal port=5432 dbname=app user=app password=',
      ' sslmode=require',
    ],
  },
  {
    name: 'a JSON-escaped PEM key',
    file: '/work/app/service-account.json',
    text: `{\n  "type": "service_account",\n  "project_id": "demo-42",\n  "private_key": ${JSON.stringify(pkcs8)},\n  "client_id": "1234"\n}\n`,
    secrets: pemBody,
    kept: ['"type": "service_account"', '"project_id": "demo-42"', '"private_key": ', '"client_id": "1234"'],
  },
  {
    name: 'a base64 docker config.json auth',
    file: '/home/dev/.docker/config.json',
    text: `{\n  "auths": {\n    "registry.example.com": {\n      "auth": "${dockerAuth}"\n    }\n  }\n}\n`,
    secrets: [dockerAuth, dockerPassword],
    kept: ['"auths": {', '"registry.example.com": {', '"auth": "'],
  },
];

/** The strings redaction returns for the class in each placement. */
function placed(c: Class): Record<string, string> {
  const redactor = new Redactor();
  const args = redactor.redactValue({ file_path: c.file, content: c.text }) as Record<string, string>;
  return {
    'tool output (Read)': redactor.redactText(numbered(c.text)),
    'tool-call arguments (Write)': args.content ?? '',
    'user prompt': new Redactor().redactText(`Why does this not work?\n\n${c.text}\nThanks.`),
  };
}

describe('issue 20 miss classes, in every placement', () => {
  for (const c of CLASSES)
    describe(c.name, () => {
      const outs = placed(c);
      for (const [placement, out] of Object.entries(outs))
        it(`${placement}: the secret is gone, the rest stays`, () => {
          for (const secret of c.secrets)
            expect({ secret, leaked: leaks(secret, out) }).toEqual({ secret, leaked: false });
          for (const kept of c.kept) expect(out).toContain(kept);
          expect(out).toContain('[REDACTED_');
        });
      it('tool output (Read) keeps its line numbers', () => {
        const out = outs['tool output (Read)'] ?? '';
        const lines = c.text.replace(/\n$/, '').split('\n').length;
        for (let n = 1; n <= lines; n++) expect(out).toContain(`${String(n).padStart(6)}→`);
      });
    });
});
