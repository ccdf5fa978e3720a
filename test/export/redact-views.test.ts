import { describe, expect, it } from 'vitest';
import { KeywordSet } from '../../src/export/redact/keywords.js';
import { type View, viewsOf } from '../../src/export/redact/views.js';

// The normalised views redaction runs its rules on (redact/views.ts) and the keyword pre-filter (redact/keywords.ts):
// a range found in a view must map back to the characters of the original it came from.

/** The original text a range of a view stands for. */
const back = (original: string, view: View, needle: string) => {
  const at = view.text.indexOf(needle);
  expect(at).toBeGreaterThanOrEqual(0);
  const [a, b] = view.map(at, at + needle.length);
  return original.slice(a, b);
};

describe('viewsOf', () => {
  it('gives a text without marks only itself', () => {
    const views = viewsOf('plain text, nothing to undo');
    expect(views.map((v) => v.text)).toEqual(['plain text, nothing to undo']);
    expect(views[0]?.map(6, 10)).toEqual([6, 10]);
  });

  it('strips Claude Code Read line numbers and maps back past them', () => {
    const text = '     1→# settings\n     2→API_TOKEN=abc123secret\n     3→DEBUG=1';
    const [base] = viewsOf(text);
    expect(base?.text).toBe('# settings\nAPI_TOKEN=abc123secret\nDEBUG=1');
    expect(back(text, base as View, 'abc123secret')).toBe('abc123secret');
    // a range over two lines covers the prefix between them in the original
    expect(back(text, base as View, 'secret\nDEBUG')).toBe('secret\n     3→DEBUG');
  });

  it('strips cat -n, opencode and diff prefixes', () => {
    expect(viewsOf('     7\tKEY=v1\n     8\tOTHER=v2')[0]?.text).toBe('KEY=v1\nOTHER=v2');
    expect(viewsOf('00001| KEY=v1\n00002| OTHER=v2')[0]?.text).toBe('KEY=v1\nOTHER=v2');
    const diff = 'diff --git a/.env b/.env\n@@ -1,2 +1,2 @@\n-KEY=old\n+KEY=new1234\n same';
    const [base] = viewsOf(diff);
    expect(base?.text).toContain('\nKEY=old\nKEY=new1234\nsame');
    expect(back(diff, base as View, 'new1234')).toBe('new1234');
  });

  it('undoes JSON escapes on the lines that have them, mapping an escape to its whole sequence', () => {
    const text = 'first line\n{"key": "-----BEGIN\\nAAAA\\u002BBBB\\"q\\""}\nlast line';
    const views = viewsOf(text);
    const un = views[1] as View;
    // only the escaped line is in the view
    expect(un.text).toBe('{"key": "-----BEGIN\nAAAA+BBB"q""}');
    expect(back(text, un, 'AAAA+BBB')).toBe('AAAA\\u002BBBB');
    expect(back(text, un, '\n')).toBe('\\n');
    expect(back(text, un, 'BEGIN\nAAAA')).toBe('BEGIN\\nAAAA');
  });

  it('undoes a second level of escapes, mapped through the first', () => {
    const text = JSON.stringify({ body: JSON.stringify({ k: 'a\nb' }) });
    const views = viewsOf(text);
    expect(views.map((v) => v.text)).toContain('{"body":"{"k":"a\nb"}"}');
    const inner = views.find((v) => v.text === '{"body":"{"k":"a\nb"}"}') as View;
    expect(back(text, inner, 'a\nb')).toBe('a\\\\nb');
  });

  it('decodes %XX on the lines that have it', () => {
    const text = 'GET /x?token=ab%2Bcd%2F12 HTTP/1.1\nHost: example.com';
    const decoded = viewsOf(text).find((v) => v.text.includes('ab+cd/12')) as View;
    expect(decoded.text).toBe('GET /x?token=ab+cd/12 HTTP/1.1');
    expect(back(text, decoded, 'ab+cd/12')).toBe('ab%2Bcd%2F12');
  });

  it('decodes a base64 blob of credentials, any range of it standing for the whole blob', () => {
    const blob = Buffer.from('deploy:s3cr3tPassw0rd').toString('base64');
    const text = `{"auths": {"r.example.com": {"auth": "${blob}"}}}`;
    const decoded = viewsOf(text).find((v) => v.blob) as View;
    expect(decoded.text).toBe('deploy:s3cr3tPassw0rd');
    const [a, b] = decoded.map(7, 9);
    expect(text.slice(a, b)).toBe(blob);
  });

  it('leaves base64 of non-text and identifiers undecoded', () => {
    expect(viewsOf('handleSubmitFormDataChanged and AbCdEfGhIjKlMnOpQrStUv').some((v) => v.blob)).toBe(false);
  });
});

describe('KeywordSet', () => {
  const set = new KeywordSet(['key', 'apikey', 'sk-ant-', 'ghp_', 'passw']);
  const found = (text: string) => [...set.found(text)].map((i) => set.keywords[i]).sort();

  it('finds every keyword, ASCII case-insensitively, overlapping ones too', () => {
    expect(found('export APIKEY=1')).toEqual(['apikey', 'key']);
    expect(found('a GHP_ token and SK-ANT-x')).toEqual(['ghp_', 'sk-ant-']);
    expect(found('Password: x')).toEqual(['passw']);
  });

  it('finds a keyword after a failed partial match', () => {
    expect(found('sk-an sk-ant-')).toEqual(['sk-ant-']);
    expect(found('pappassw')).toEqual(['passw']);
  });

  it('finds nothing in a text without keywords, and is not fooled by non-ASCII', () => {
    expect(found('nothing here at all')).toEqual([]);
    expect(found('kéy passé ghp')).toEqual([]);
    expect(found('ключ key')).toEqual(['key']);
  });

  it('refuses a non-ASCII keyword', () => {
    expect(() => new KeywordSet(['clé'])).toThrow(/ASCII/);
  });
});
