import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAccountName, isPersonName, Names, namesIn, partsOf } from '../../src/export/redact/names.js';
import { Redactor } from '../../src/export/redact.js';

// People's names (issue 22): learned from the shapes of tool output that say "this is a person or an account",
// then replaced wherever they appear, one placeholder per person; texts that only look like those shapes teach
// nothing, and ordinary text stays as it was once real names are known.

const learned = (text: string) => namesIn(text).map((found) => `${found.from}:${found.name}`);

/** A redactor that learned from `from`, and what it makes of `text`. */
function redacted(from: unknown[], text: string, given: string[] = []): { out: string; counts: object } {
  const redactor = new Redactor({ names: given });
  for (const value of from) redactor.learnNames(value);
  const out = redactor.redactText(text);
  return { out, counts: redactor.counts() };
}

describe('learning rules', () => {
  it.each([
    [
      'git log',
      'commit 3f2a9c1d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c\nAuthor: Jane Q. Doe <jane@example.com>\nDate:   Mon Feb 10 22:55:00 2026 +0100\n\n    fix the parser',
      ['git:Jane Q. Doe'],
    ],
    [
      'git log --format=fuller',
      'commit abc\nAuthor:     Priya Raman <priya@example.com>\nAuthorDate: Mon\nCommit:     Ola Nordmann <ola@example.no>\nCommitDate: Mon',
      ['git:Priya Raman', 'git:Ola Nordmann'],
    ],
    ['a Committer line', 'Committer: José García <jose@example.es>', ['git:José García']],
    [
      'trailers',
      'Signed-off-by: Jane Doe <jane@example.com>\nCo-authored-by: Kwame Mensah <kwame@example.com>',
      ['git:Jane Doe', 'git:Kwame Mensah'],
    ],
    [
      'git log read through Read (line numbers)',
      '     1→commit abc\n     2→Author: Jane Doe <jane@example.com>',
      ['git:Jane Doe'],
    ],
    [
      'git log in JSON-escaped text',
      String.raw`{"stdout":"commit abc\nAuthor: Jane Doe <jane@example.com>\nDate: Mon"}`,
      ['git:Jane Doe'],
    ],
    [
      'git config -l',
      'core.editor=vim\nuser.name=Jane Doe\nuser.email=jane@example.com',
      ['git-config:Jane Doe'],
    ],
    ['git config set', 'git config --global user.name "Jane Doe"', ['git-config:Jane Doe']],
    [
      'git config set, single quotes',
      "git config user.name 'Jane Doe' && git commit",
      ['git-config:Jane Doe'],
    ],
    [
      'a .gitconfig',
      '[user]\n\temail = jane@example.com\n\tname = Jane Doe\n[core]',
      ['git-config:Jane Doe'],
    ],
    ['a .gitconfig through Read', '     1→[user]\n     2→\tname = Jane Doe', ['git-config:Jane Doe']],
    [
      'git env',
      'GIT_AUTHOR_NAME="Jane Doe" GIT_COMMITTER_NAME=jdoe git commit',
      ['git-config:Jane Doe', 'git-config:jdoe'],
    ],
    [
      'ls -l',
      'total 8\ndrwxr-xr-x  2 jdoe  devteam 4096 Feb 10 22:55 .\n-rw-r--r--  1 root  wheel    10 Feb 10 22:55 a.txt',
      ['ls:jdoe', 'ls:devteam'],
    ],
    [
      'ls -l through Read',
      '     1→total 8\n     2→-rw-r--r--@ 1 marco  staff  152 Feb 10 22:06 CLAUDE.md',
      ['ls:marco'],
    ],
    [
      'ls -l --time-style=long-iso, a device',
      'crw-rw----  1 alice tty 4, 1 2026-02-10 22:55 tty1\n-rw-r-----  1 alice adm 10 2026-02-10 22:55 log',
      ['ls:alice', 'ls:alice'],
    ],
    ['id', 'uid=1000(alice) gid=1000(alice) groups=1000(alice),27(sudo)', ['id:alice', 'id:alice']],
    [
      'stat',
      'Access: (0644/-rw-r--r--)  Uid: ( 1000/   alice)   Gid: ( 1000/   alice)',
      ['id:alice', 'id:alice'],
    ],
    [
      'JSON a tool printed',
      '{"id":"spotter-0rt","created_by":"Marco Rotili","owner":"marco.rotili@example.ai"}',
      ['json:Marco Rotili'],
    ],
    [
      'JSON-escaped JSON',
      String.raw`{\"created_at\":\"2026-02-10\",\"created_by\":\"Marco Rotili\"}`,
      ['json:Marco Rotili'],
    ],
    [
      "package.json's author",
      '{\n  "name": "app",\n  "author": "Jane Doe <jane@example.com> (https://jane.dev)"\n}',
      ['json:Jane Doe'],
    ],
    [
      'an issue tracker’s text (beads `bd show`)',
      '○ app-1 · Parser fails   [● P2 · OPEN]\nOwner: Marco Rotili · Type: task\nAssignee: Ola Nordmann\nReporter: team-infra',
      ['label:Marco Rotili', 'label:Ola Nordmann'],
    ],
    ['a home path', 'cd /home/alice/src && ls', ['home:alice']],
    ['a macOS home path at the end of a sentence', 'It lives in /Users/jdoe.', ['home:jdoe']],
    ['a Windows home path', String.raw`C:\Users\Priya\AppData`, ['home:Priya']],
  ])('%s', (_, text, names) => {
    expect(learned(text)).toEqual(names);
  });

  it('the output of `git config user.name` and `whoami`, paired with their calls by id', () => {
    const names = new Names();
    // our session model
    names.learn([
      { type: 'tool_call', id: 'c1', name: 'Bash', input: { command: 'git config user.name' } },
      { type: 'tool_result', callId: 'c1', output: 'Jane Doe\n', isError: false },
      { type: 'tool_call', id: 'c2', name: 'Bash', input: { command: 'whoami' } },
      { type: 'tool_result', callId: 'c2', output: 'jdoe\n', isError: false },
    ]);
    // the chat form of a pair
    names.learn({
      messages: [
        {
          role: 'assistant',
          tool_calls: [
            {
              id: 'c3',
              type: 'function',
              function: { name: 'Bash', arguments: '{"command":"git config --global user.name"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c3', content: 'Priya Raman' },
      ],
    });
    // the same output without such a call teaches nothing
    names.learn([{ type: 'tool_result', callId: 'c9', output: 'Nobody Here\n', isError: false }]);
    expect(
      names
        .entries()
        .map(([name]) => name)
        .sort(),
    ).toEqual(['Doe', 'Jane', 'Jane Doe', 'Priya', 'Priya Raman', 'Raman', 'jdoe']);
  });

  it('a JSON-like value: a person key of call arguments, and every string in it', () => {
    const names = new Names();
    names.learn({
      issue: { title: 'Fix it', createdBy: 'Ola Nordmann' },
      note: 'Author: Jane Doe <j@example.com>',
    });
    expect(names.entries().map(([name]) => name)).toContain('Ola Nordmann');
    expect(names.entries().map(([name]) => name)).toContain('Jane Doe');
  });
});

describe('the stop list: texts that teach no name', () => {
  const nothing = [
    'Co-Authored-By: Claude <noreply@anthropic.com>',
    'Co-authored-by: Copilot <175728472+Copilot@users.noreply.github.com>',
    'Author: GitHub <noreply@github.com>\nCommit: GitHub <noreply@github.com>',
    'Author: dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>',
    'Author: renovate[bot] <29139614+renovate[bot]@users.noreply.github.com>',
    'Author: github-actions <41898282+github-actions[bot]@users.noreply.github.com>',
    'Author: Your Name <you@example.com>',
    'git config --global user.name "Your Name"',
    'user.name=Your Name',
    'Author: Jo <jo@example.com>', // too short to be searched for safely
    'drwxr-xr-x  2 root   root    4096 Feb 10 22:55 .\n-rw-r--r--  1 nobody nogroup   10 Feb 10 22:55 a',
    '-rw-r--r--  1 alice_ staff 10 Feb 10 22:55 a'.replace('alice_', 'root'),
    '-rw-r--r--  1 1000 1000 10 Feb 10 22:55 a\n-rw-r--r--  1 ubuntu users 10 Feb 10 22:55 b',
    'drwxr-xr-x  5 runner docker 4096 Feb 10 22:55 work\n-rw-r--r--  1 www-data www-data 1 Feb 10 22:55 x',
    'lrwxr-xr-x  1 root admin 1 Feb 10 22:55 tmp -> private/tmp\n-rw-r--r--  1 _spotlight wheel 1 Feb 10 22:55 s',
    'uid=0(root) gid=0(root) groups=0(root)',
    '{"created_by": "system", "author": "OpenAI", "created_by_id": "Jane Doe"}',
    '{"created_by": "ci-bot", "author": "Build Team", "updated_by": 42, "author": "https://example.com"}',
    '{"author": "dependabot[bot]", "created_by": "Claude Code", "created_by": "unknown"}',
    'cd /home/runner/work && ls /Users/Shared /home/user /home/user_1',
    'The author of the parser <see CONTRIBUTORS> wrote it.',
    'git config user.name returns the configured name; see git config user.name --help',
    'The Author: field of git log <email> is documented.',
    'drwx------ is the mode; 2 links, owner and group follow',
    'Owner: none · Type: task\nAssignee: Unassigned\nOwner: Platform Team\nOwner: GitHub Actions',
    'Created by: the deploy script (see Owner: field)',
  ];
  it.each(nothing)('%s', (text) => {
    expect(learned(text)).toEqual([]);
  });

  it('shape and word checks', () => {
    for (const name of [
      'Jane Doe',
      'José García',
      "Conan O'Brien",
      'Jean-Luc Picard',
      'Jane Q. Doe',
      'Priya',
    ])
      expect(isPersonName(name), name).toBe(true);
    for (const name of [
      'Your Name',
      'GitHub',
      'Claude',
      'dependabot[bot]',
      'ci bot',
      'Jo',
      'Test',
      'Will',
      'x1 y2',
      'Jane Doe <j@x>',
      'a/b',
      'One Two Three Four Five',
    ])
      expect(isPersonName(name), name).toBe(false);
    expect(isPersonName('Build Team', false)).toBe(false);
    for (const name of ['jdoe', 'alice', 'marco.rotili', 'priya_r'])
      expect(isAccountName(name), name).toBe(true);
    for (const name of [
      'root',
      'nobody',
      'staff',
      'wheel',
      'users',
      'admin',
      'git',
      'node',
      'runner',
      'docker',
      'dev',
      'pi',
      '1000',
      'user_3',
      'systemd-network',
      '_www',
      'build',
    ])
      expect(isAccountName(name), name).toBe(false);
    expect(partsOf('Jane Q. Doe')).toEqual(['Jane', 'Doe']);
    expect(partsOf('Ludwig van Beethoven')).toEqual(['Ludwig', 'Beethoven']);
    // a part that is also a word is not replaced alone (the full name still is)
    expect(partsOf('Mark Will')).toEqual([]);
    expect(partsOf('Al Li')).toEqual([]);
    expect(partsOf('Priya')).toEqual([]);
  });
});

describe('replacing learned names', () => {
  const people = [
    'commit abc\nAuthor: Jane Q. Doe <jane@example.com>',
    '{"created_by":"Marco Rotili"}',
    'drwxr-xr-x  2 marco  staff 4096 Feb 10 22:55 .\n-rw-r--r--  1 jdoe  staff 10 Feb 10 22:55 a',
  ];

  it('one placeholder per person: full name, parts and the accounts that spell it; numbered as first learned', () => {
    const { out, counts } = redacted(
      people,
      'Jane Q. Doe and Marco Rotili met; Jane pinged Marco, Doe and Rotili replied; ls shows marco and jdoe.',
    );
    expect(out).toBe(
      '[REDACTED_PERSON_1] and [REDACTED_PERSON_2] met; [REDACTED_PERSON_1] pinged [REDACTED_PERSON_2], [REDACTED_PERSON_1] and [REDACTED_PERSON_2] replied; ls shows [REDACTED_PERSON_2] and [REDACTED_PERSON_1].',
    );
    expect(counts).toEqual({ person: 8 });
  });

  it('the texts it was learned from lose the names too', () => {
    const redactor = new Redactor();
    for (const text of people) redactor.learnNames(text);
    expect(people.map((text) => redactor.redactText(text))).toEqual([
      'commit abc\nAuthor: [REDACTED_PERSON_1] <[REDACTED_EMAIL_1]>',
      '{"created_by":"[REDACTED_PERSON_2]"}',
      'drwxr-xr-x  2 [REDACTED_PERSON_2]  staff 4096 Feb 10 22:55 .\n-rw-r--r--  1 [REDACTED_PERSON_1]  staff 10 Feb 10 22:55 a',
    ]);
  });

  it('an account learned before the full name it spells joins that person', () => {
    const { out } = redacted(
      ['-rw-r--r--  1 mrotili  staff 10 Feb 10 22:55 a', '{"created_by":"Marco Rotili"}'],
      'mrotili is Marco Rotili',
    );
    expect(out).toBe('[REDACTED_PERSON_1] is [REDACTED_PERSON_1]');
  });

  it('a shorter spelling of a known person joins it: Jane Doe after Jane Q. Doe', () => {
    const { out } = redacted(
      ['Author: Jane Q. Doe <j@example.com>', 'user.name=Jane Doe'],
      'Jane Doe, Jane Q. Doe',
    );
    expect(out).toBe('[REDACTED_PERSON_1], [REDACTED_PERSON_1]');
  });

  it('case-sensitive, on word boundaries; JSON escapes and Read prefixes are boundaries', () => {
    const { out } = redacted(
      people,
      String.raw`Janet, Marcos, MARCO, jane, Doeling, marco_x, x_marco; {"a":"x\nMarco\tRotili"} and "     3→Jane"`,
    );
    expect(out).toBe(
      String.raw`Janet, Marcos, MARCO, jane, Doeling, marco_x, x_marco; {"a":"x\n[REDACTED_PERSON_2]\t[REDACTED_PERSON_2]"} and "     3→[REDACTED_PERSON_1]"`,
    );
  });

  it('an email keeps its email placeholder, a home path its user_<n>', () => {
    const { out, counts } = redacted(
      [...people, 'cd /home/alice/src'],
      'mail marco.rotili@example.ai or jdoe@example.com; open /home/alice/src and /Users/marco/x; alice said hi',
    );
    expect(out).toBe(
      'mail [REDACTED_EMAIL_1] or [REDACTED_EMAIL_2]; open /home/user_1/src and /Users/user_2/x; [REDACTED_PERSON_3] said hi',
    );
    expect(counts).toEqual({ email: 2, home_user: 2, person: 1 });
  });

  it('--redact-name: given names first, with their parts, even when never learned', () => {
    const { out } = redacted(people, 'Kwame Mensah, Kwame, Mensah and Marco', ['Kwame Mensah']);
    expect(out).toBe('[REDACTED_PERSON_1], [REDACTED_PERSON_1], [REDACTED_PERSON_1] and [REDACTED_PERSON_3]');
  });

  it('call arguments: values and keys', () => {
    const redactor = new Redactor();
    redactor.learnNames(people);
    expect(redactor.redactValue({ assignee: 'Marco Rotili', tags: ['jdoe'], 'Jane Q. Doe': 1 })).toEqual({
      assignee: '[REDACTED_PERSON_2]',
      tags: ['[REDACTED_PERSON_1]'],
      '[REDACTED_PERSON_1]': 1,
    });
  });

  it('a name learned after a text was redacted is found in it again (no stale cache)', () => {
    const redactor = new Redactor();
    const long = `${'x '.repeat(200)}Priya Raman`;
    expect(redactor.redactText(long)).toBe(long);
    redactor.learnNames('user.name=Priya Raman');
    expect(redactor.redactText(long)).toBe(`${'x '.repeat(200)}[REDACTED_PERSON_1]`);
  });

  // Once real names are known, ordinary code and prose stay as they were.
  const untouched = [
    'Mark the task as done. Will it build? Grant access to the bucket. Hope this helps.',
    'git log --author="$AUTHOR" --format="%an <%ae>"',
    'drwxr-xr-x  2 root wheel 4096 Feb 10 22:55 .',
    'export function createdBy(user: User) { return user.name; }',
    'const jane = 1; // lower case is not the name',
    'Janet Doeling and Marcos Rotilio are other people.',
    'Co-Authored-By: Claude <noreply@anthropic.com>',
    'src/pages/home/index.tsx and app/api/Users/list.ts',
  ];
  it.each(untouched)('untouched after learning: %s', (text) => {
    const { out, counts } = redacted(people, text);
    expect(out).toBe(text);
    expect(counts).toEqual({});
  });
});

describe('real logs', () => {
  function* logs(dir: string): Generator<string> {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) yield* logs(path);
      else if (/\.jsonl?$/.test(name)) yield path;
    }
  }

  it('the real fixtures (four agents, ~10 MB) teach their people and nothing else', () => {
    const names = new Names();
    for (const file of logs('test/fixtures/real'))
      for (const line of readFileSync(file, 'utf8').split('\n'))
        if (line.trim() !== '') {
          try {
            names.learn(JSON.parse(line));
          } catch {
            names.learnText(line);
          }
        }
    // the user of the Claude Code logs (JSON, `bd show`, ls -l, home paths), and the home-path accounts of others
    expect(names.entries().sort()).toEqual(
      [
        ['Marco', 1],
        ['Marco Rotili', 1],
        ['Rotili', 1],
        ['ada', 2],
        ['marco', 1],
        ['nathan', 3],
      ].sort(),
    );
  });
});
