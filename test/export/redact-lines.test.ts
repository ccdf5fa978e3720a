import { describe, expect, it } from 'vitest';
import { viewsOf } from '../../src/export/redact/views.js';
import { assignmentFindings } from '../../src/export/rules.js';
import { corpusTexts } from '../helpers/secret-corpus.js';

// The assignment rules (`.env` lines, `key: "value"`, YAML, CLI flags) read only the lines of a text that hold a
// secret-key word (issue 21: most of an export's text is code and tool output without one). That must find
// exactly what reading every line finds, on every view of every text redaction reads.

const texts = corpusTexts;

const edges = [
  'API_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c',
  'x\nAPI_KEY=sk-live-4f9a8b7c6d5e4f3a2b1c\ny',
  'line one\r\nDB_PASSWORD="hunter2-Xk9qP7"\r\nline three',
  'no newline before: export GITHUB_TOKEN=ghp_notreal1234567890abcdefXYZ',
  '{\\n  \\"password\\": \\"Zq8#mLp2vR\\"\\n}',
  'name: app\n  password: Zq8mLp2vRw\nport: 80',
  `${'a'.repeat(600)}\nSECRET_KEY=Zq8mLp2vRw7\n${'b'.repeat(600)}\nAUTH_TOKEN=Ab3dE6gH9jK2\n`,
  `client_secret = "Ab3dE6gH9jK2mN"\n${'\n'.repeat(3)}--token Xy7Zq8mLp2vR9`,
  'curl -H "x" --password=Zq8mLp2vRw7 https://example.com; OPENAI_API_KEY=sk-abc123def456ghi789 node x.js',
  'Key\npass\nPwD=Zq8mLp2vRw7\ndsn: postgres://u:p@h/db\ncredentials: Zq8mLp2vRw7x\n',
  '$config = [\n  api_key => "Zq8mLp2vRw7x",\n];\nsecret_token =>\t\\"Ab3dE6gH9jK2mN\\"',
  'password:\tZq8mLp2vRw7\ntoken:  Ab3dE6gH9jK2',
];

describe('the assignment rules read only lines with a secret-key word', () => {
  it('find what a scan of every line finds, on every view of the corpus texts and of edge cases', () => {
    const all = [...texts(), ...edges];
    // many texts in one: candidate lines near and far from each other, joined and not
    const joined = [all.join('\n'), all.join('\r\n'), all.join('\\n')];
    let views = 0;
    let findings = 0;
    const differing: string[] = [];
    for (const text of [...all, ...joined])
      for (const view of viewsOf(text)) {
        views++;
        const fast = assignmentFindings(view.text);
        findings += fast.length;
        if (JSON.stringify(fast) !== JSON.stringify(assignmentFindings(view.text, true)))
          differing.push(view.text.slice(0, 200));
      }
    expect(differing).toEqual([]);
    // the corpus is full of assignments: a rule set that found nothing would pass the comparison
    expect(views).toBeGreaterThan(2000);
    expect(findings).toBeGreaterThan(1000);
  });
});
