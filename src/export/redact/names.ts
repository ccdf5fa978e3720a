// People's names for export redaction (issue 22), without a model: the names are learned from the logs being
// exported, in a first pass over them (see Exporter), then every occurrence of a learned name in any text is
// replaced by the placeholder of its person, `[REDACTED_PERSON_<n>]`.
//
// Where a name is learned (every rule is anchored on a shape that says "this is a person or an account"):
// - git identities with an email: `Author:`/`Commit:`/`Committer:` lines of `git log`, trailers
//   (`Co-authored-by:`, `Signed-off-by:`, `Reviewed-by:`…);
// - git settings: `user.name=…` (`git config -l`), `git config [--global] user.name "…"`, `name = …` under
//   `[user]` (a `.gitconfig` read), `GIT_AUTHOR_NAME=…` / `GIT_COMMITTER_NAME=…`, and the output of a
//   `git config user.name` or `whoami` call (the call and its result are paired by id in the first pass);
// - `ls -l` owner and group columns (also with the `     N→` prefix of Claude Code's Read), `id` output
//   (`uid=1000(alice)`), `stat` output (`Uid: ( 1000/  alice)`);
// - labelled lines of issue trackers' output (`Owner: Jane Doe · Type: task`), full capitalised names only;
// - JSON a tool printed: `"created_by"`, `"updated_by"`, `"author"`, `"author_name"`, `"committer_name"`,
//   `"full_name"`… whose value reads as a person's name (also JSON-escaped, `\"created_by\":\"…\"`);
// - the account name of a home path (`/home/alice/…`, `/Users/alice/…`, `C:\Users\alice\…`), as rules.ts finds it;
// - `--redact-name NAME` (given first, so its people are numbered first).
//
// What is replaced: the name as learned (case-sensitive, on word boundaries: `Jane Doe` but not `Janet`), and the
// parts of a full name: each token of at least 3 letters that is not a common word (`Jane Q. Doe` → also `Jane`
// and `Doe`), under the same placeholder as the full name. An account name that is a spelling of a known full
// name (`jane`, `doe`, `janedoe`, `jane.doe`, `jdoe`) shares its placeholder too. People are numbered in the order
// they are learned (a person's first name learned decides; `--redact-name` ones first); nothing of the texts is
// kept, only the set of names. Lower-case forms of a full name (`jane doe`) are not searched: case-sensitive
// matching is what keeps `Mark`/`mark`, `Will`/`will` apart.
//
// Cost: one keyword pass (keywords.ts) per text of the first pass decides which rules are tried; the search is one
// alternation of every name, built once after the first pass, run once per text.
//
// False positives are kept low by a stop list (STOP_NAMES: placeholder and bot identities, system accounts and
// groups, agent and vendor names; COMMON_WORDS: English and programming words that a single-token name must not
// be), a shape check (letters, spaces, `.`, `'`, `-`; 1-4 tokens; no digits, `@`, `/`), and a minimum length
// (a single-token name or a part: 3 characters), and org words (`Platform Team`, `Release Bot`). A home path keeps its `user_<n>` (rules.ts); an email stays an
// email placeholder (it wins an overlap with a name inside it).

import { homePathMayStart } from '../rules.js';
import { type Add, PRIORITY } from './finding.js';
import { KeywordSet } from './keywords.js';

/** Identities that are nobody's: git placeholders, bots, agents and vendors, generic and system accounts. */
export const STOP_NAMES: ReadonlySet<string> = new Set(
  [
    // placeholders
    'your name',
    'your full name',
    'full name',
    'first last',
    'firstname lastname',
    'first name',
    'last name',
    'name',
    'user',
    'username',
    'user name',
    'unknown',
    'anonymous',
    'nobody',
    'someone',
    'test',
    'test user',
    'tester',
    'example',
    'example user',
    'author',
    'committer',
    'owner',
    'me',
    'you',
    'none',
    'null',
    'undefined',
    'n/a',
    'system',
    'admin',
    'administrator',
    'root',
    'superuser',
    'guest',
    'default',
    'everyone',
    'maintainer',
    'maintainers',
    'contributors',
    'developer',
    'developers',
    'team',
    // forges, CI and bots
    'github',
    'github action',
    'github actions',
    'github-actions',
    'github enterprise',
    'gitlab',
    'gitlab ci',
    'bitbucket',
    'web flow',
    'web-flow',
    'noreply',
    'no-reply',
    'dependabot',
    'renovate',
    'renovate bot',
    'snyk bot',
    'greenkeeper',
    'semantic-release-bot',
    'copybara',
    'travis ci',
    'circleci',
    'jenkins',
    'buildkite',
    'bot',
    // agents and vendors (their co-author trailers are machine identities)
    'claude',
    'claude code',
    'anthropic',
    'openai',
    'codex',
    'chatgpt',
    'gpt',
    'copilot',
    'github copilot',
    'gemini',
    'gemini cli',
    'google',
    'qwen',
    'qwen code',
    'qwen-coder',
    'opencode',
    'cursor',
    'cursor agent',
    'aider',
    'devin',
    'microsoft',
    'apple',
    'amazon',
    'meta',
    // system accounts and groups (ls -l, id, stat)
    'nogroup',
    'staff',
    'wheel',
    'users',
    'daemon',
    'bin',
    'sys',
    'adm',
    'tty',
    'disk',
    'lp',
    'mail',
    'news',
    'uucp',
    'man',
    'proxy',
    'kmem',
    'dialout',
    'fax',
    'voice',
    'cdrom',
    'floppy',
    'tape',
    'sudo',
    'audio',
    'dip',
    'www-data',
    'backup',
    'operator',
    'list',
    'irc',
    'src',
    'gnats',
    'shadow',
    'utmp',
    'video',
    'sasl',
    'plugdev',
    'games',
    'messagebus',
    'syslog',
    '_apt',
    'docker',
    'lxd',
    'input',
    'render',
    'netdev',
    'crontab',
    'ssl-cert',
    'systemd-journal',
    'systemd-network',
    'systemd-resolve',
    'systemd-timesync',
    'polkitd',
    'sshd',
    'ssh',
    'ftp',
    'http',
    'www',
    'nginx',
    'apache',
    'postgres',
    'mysql',
    'redis',
    'mongodb',
    'git',
    'ubuntu',
    'debian',
    'ec2-user',
    'centos',
    'fedora',
    'alpine',
    'vagrant',
    'node',
    'runner',
    'vscode',
    'codespace',
    'codespaces',
    'dev',
    'app',
    'service',
    'build',
    'builder',
    'ci',
    'deploy',
    'everybody',
    'access_bpf',
    'localaccounts',
    'com.apple.access_ssh',
    '_www',
    '_spotlight',
    'linuxbrew',
    'shared',
    'public',
  ].map((name) => name.toLowerCase()),
);

/**
 * Words a single-token name, or a part of a full name, must not be: where a name is also an ordinary word
 * (`Will`, `Mark`, `Grant`), the full name is still replaced, the word alone is not. Compared lower-cased.
 */
export const COMMON_WORDS: ReadonlySet<string> = new Set(
  `the and for are but not you all any can had her was one our out day get has him his how man new now old see two
way who boy did its let put say she too use will mark grant bill hope joy faith rose art max may june april august
jack frank rich guy ray sky lane park hill wood stone brown green white black gray grey young king law page
price ward wells cook hunter dean chase cash van von der den del dos das des
case set get put map key log run test main master head tag hash user name root home team core base node data
file path line code type list item view page form link button input output value state store model query
error warn info debug trace fatal true false null none nil void self this that with from into over under
about above after again also back been before being both call come could does done down each even every find
first give good great here just know last like long look made make many more most much must need next only
other part place right same should show since some still such take than them then there these they thing
think those three through time very want well went were what when where which while work would year your
new open close start stop read write edit delete create update change merge commit push pull fetch clone
branch rebase reset patch diff status config init add remove move copy sync check build deploy release
version install package module import export class function return const async await yield static public
private protected interface struct enum trait impl match case break continue default switch loop
server client host port local remote admin guest owner group other world system service daemon worker agent
claude codex gemini qwen cursor copilot github gitlab google apple amazon microsoft linux darwin windows
ubuntu debian docker python java rust ruby perl swift kotlin scala go golang node deno bun react vue angular
svelte next nuxt rails django flask spring express laravel jest vitest mocha chai npm yarn pnpm pip cargo
monday tuesday wednesday thursday friday saturday sunday january february march july september october
november december spring summer autumn winter north south east west
`
    .split(/\s+/)
    .filter((word) => word !== ''),
);

/** Where a name was learned (for tests and debugging). */
export type NameSource = 'git' | 'git-config' | 'label' | 'ls' | 'id' | 'json' | 'home' | 'whoami' | 'given';

/** Words that make a name a team's, a company's or a machine's (`Platform Team`, `Release Bot`, `Acme Inc`). */
const ORG_WORDS = new Set(
  `team teams group squad org organization organisation inc ltd llc gmbh corp corporation company co labs lab
dept department engineering platform infra infrastructure ops devops sre security support service services
release releases build builds automation automated system systems bot bots ci cd pipeline deploy deployment
admin admins administrator maintainers contributors community project account robot daemon server cloud`.split(
    /\s+/,
  ),
);

const LETTER_TOKEN = /^[\p{L}][\p{L}\p{M}'’.-]*$/u;
const hasLetters = (token: string, n: number) => (token.match(/\p{L}/gu)?.length ?? 0) >= n;

/**
 * A value that reads as a person's name: 1-4 tokens of letters (`.`, `'`, `-` inside), not a stop name. Where
 * the context is weak (`strong` false: a JSON value), a name made only of common words (`Build Team`) is not one.
 */
export function isPersonName(value: string, strong = true): boolean {
  const name = value.trim();
  if (name.length < 2 || name.length > 60) return false;
  if (STOP_NAMES.has(name.toLowerCase())) return false;
  if (/\[bot\]$|[-\s]bot$|^bot[-\s]/i.test(name)) return false;
  const tokens = name.split(/\s+/);
  if (tokens.some((token) => ORG_WORDS.has(token.toLowerCase()))) return false;
  if (tokens.length > 4 || !tokens.every((token) => LETTER_TOKEN.test(token))) return false;
  if (tokens.length === 1) return name.length >= 3 && !COMMON_WORDS.has(name.toLowerCase());
  // several tokens: at least one real word of two letters, and (weak context) not all of them common words
  if (!tokens.some((token) => hasLetters(token, 2))) return false;
  return strong || !tokens.every((token) => COMMON_WORDS.has(token.toLowerCase().replace(/\.$/, '')));
}

/** A login or group name (`ls -l`, `id`, home paths): 3+ characters, not numeric, not a system account. */
export function isAccountName(value: string): boolean {
  if (value.length < 3 || value.length > 32) return false;
  if (!/^[\p{L}_][\p{L}\p{N}._-]*$/u.test(value) || /^\d+$/.test(value)) return false;
  if (!hasLetters(value, 3)) return false;
  const lower = value.toLowerCase();
  if (STOP_NAMES.has(lower) || COMMON_WORDS.has(lower)) return false;
  if (/^(?:systemd|_|com\.apple)/.test(lower) || /\[bot\]$|-bot$/.test(lower)) return false;
  return !/^user_\d+$/.test(value);
}

/** The tokens of a full name replaced on their own: 3+ letters, not a common word or a stop name. */
export function partsOf(name: string): string[] {
  const tokens = name.trim().split(/\s+/);
  if (tokens.length < 2) return [];
  return tokens.filter(
    (token) =>
      hasLetters(token, 3) &&
      !token.endsWith('.') &&
      !COMMON_WORDS.has(token.toLowerCase()) &&
      !STOP_NAMES.has(token.toLowerCase()),
  );
}

// --- Learning rules: each returns the names it finds in one text.

// A line start: the text's, a newline (also JSON-escaped `\n`), or Read's `     N→` line-number prefix.
const LINE = String.raw`(?:^|\n|\\n|\r|→)[ \t]*`;
/** `Author: Jane Doe <jane@example.com>`, `Commit:`, `Committer:`, and trailers with an identity. */
const GIT_IDENTITY = new RegExp(
  String.raw`${LINE}(?:Author|Commit|Committer|Co-authored-by|Signed-off-by|Reviewed-by|Tested-by|Acked-by|Reported-by|Suggested-by|Helped-by):[ \t]+([^\s<>\\"][^<>\n\\"]*?)[ \t]+<[^<>\s]*>`,
  'gi',
);
/** `Owner: Jane Doe · Type: task` (issue trackers' text output: beads, gh, jira CLIs): only a capitalised full
 * name, ended by the line or a separator, so that `Owner: team-infra` or `Owner: none` teach nothing. */
const LABELLED = new RegExp(
  String.raw`${LINE}(?:Owner|Assignee|Assigned to|Reporter|Created by|Updated by|Closed by|Opened by|Requested by|Maintainer):[ \t]+(\p{Lu}[\p{L}\p{M}'’.-]+(?:[ \t]\p{Lu}[\p{L}\p{M}'’.-]*){1,3})(?=[ \t]*(?:$|\n|\\n|\r|[·|,;(<\t]))`,
  'gu',
);
/** `user.name=Jane Doe` (git config -l / --list). */
const USER_NAME_SETTING = new RegExp(String.raw`${LINE}user\.name[ \t]*=[ \t]*([^\n\\"=]+)`, 'g');
/** `git config [--global] user.name "Jane Doe"` (a command, in arguments or in a transcript); unquoted, one
 * capitalised word (`user.name Jane`), so that prose (`git config user.name returns it`) teaches nothing. */
const GIT_CONFIG_SET =
  /git\s+config\s+(?:--[a-z-]+\s+)*user\.name\s+(?:\\?"([^"\\\n]+)\\?"|'([^'\n]+)'|(\p{Lu}[^\s;&|"'\\]*))/gu;
/** `name = Jane Doe` in the `[user]` section of a git config file. */
const GITCONFIG_USER =
  /\[user\][ \t]*(?:(?:\n|\\n)[ \t]*(?:\d+→)?[ \t]*(?:email|signingkey|useConfigOnly)[^\n\\]*)*(?:\n|\\n)[ \t]*(?:\d+→)?[ \t]*name[ \t]*=[ \t]*([^\n\\"]+)/gi;
/** `GIT_AUTHOR_NAME="Jane Doe"`, `GIT_COMMITTER_NAME=jane`. */
const GIT_ENV = /GIT_(?:AUTHOR|COMMITTER)_NAME=(?:\\?"([^"\\\n]+)\\?"|'([^'\n]+)'|([^\s;&|"'\\]+))/g;
/** An `ls -l` line: mode, links, owner, group, size (or `major, minor`), then a date. */
const LS_LINE = new RegExp(
  String.raw`${LINE}[-dlcbpsD][rwxsStT-]{9}[@+.]?[ \t]+\d+[ \t]+(\S+)[ \t]+(\S+)[ \t]+\d+(?:,[ \t]*\d+)?[ \t]+(?:[A-Z][a-z]{2}[ \t]|\d{4}-\d\d-\d\d|\d{1,2}[ \t.])`,
  'g',
);
/** `id`: `uid=1000(jane) gid=1000(jane) groups=…`; `stat`: `Uid: ( 1000/    jane)`. */
const ID_NAMES = /\b[ug]id=\d+\(([^()\s]+)\)|\b[UG]id: \(\s*\d+\/\s*([^()\s]+)\)/g;
/** JSON a tool printed: a person key and a string value (also JSON-escaped: `\"created_by\":\"…\"`). */
const JSON_PERSON =
  /\\?"(created_?by|createdBy|updated_?by|updatedBy|modified_?by|modifiedBy|closed_?by|closedBy|deleted_?by|deletedBy|author|author_?name|authorName|committer_?name|committerName|full_?name|fullName|assignee_?name|reporter_?name)\\?"[ \t]*:[ \t]*\\?"([^"\\\n]{2,120})\\?"/g;
/** Keys of a JSON-like value (call arguments) whose string value is a person, as JSON_PERSON's. */
const PERSON_KEY =
  /^(?:created_?by|createdBy|updated_?by|updatedBy|modified_?by|modifiedBy|closed_?by|closedBy|deleted_?by|deletedBy|author|author_?name|authorName|committer_?name|committerName|full_?name|fullName|assignee_?name|reporter_?name)$/;
/** The account of a home path, as rules.ts's home-path detector (its user segment), in two searches that start
 * with a literal (`/home/`, `/Users/`; `X:\Users\` only where the text has one): a lookbehind first would be
 * tried at every character. What may stand before the path is checked on the few matches (homePathMayStart). */
const HOME_POSIX = /\/(?:home|Users)\/([^\\/\s"'`:;,*?<>|[\](){}$%]+)/g;
const HOME_WINDOWS = /[A-Za-z]:(?:\\\\|\\|\/)Users(?:\\\\|\\|\/)([^\\/\s"'`:;,*?<>|[\](){}$%]+)/g;

/** `Jane Doe <jane@example.com> (https://jane.dev)` (npm's `author`) → `Jane Doe`. */
const personOf = (value: string) => value.replace(/\s*[<(].*$/, '').trim();

/** What a text must hold (ASCII case aside) for a rule to be tried: one pass over it finds them all. */
const HINT_RULES: [string, string[]][] = [
  ['git', ['author:', 'commit:', 'committer:', '-by:']],
  ['label', ['owner:', 'assignee:', 'assigned to:', 'reporter:', ' by:', 'maintainer:']],
  ['user.name', ['user.name']],
  ['[user]', ['[user]']],
  ['env', ['git_author_name=', 'git_committer_name=']],
  // a mode column: the permissions of group and other end in one of these
  ['ls', ['r--', 'r-x', 'rwx', '------']],
  ['id', ['uid=', 'uid: (']],
  ['json', ['_by', 'by"', 'by\\"', 'author', 'ommitter', 'ull_name', 'ullname', 'ssignee', 'eporter']],
  ['home', ['/home/', '/users/']],
  ['windows', [':\\users', ':\\\\users', ':/users']],
];
const HINTS = new KeywordSet(HINT_RULES.flatMap(([, words]) => words));
const HINT_RULE = HINT_RULES.flatMap(([rule, words]) => words.map(() => rule));

/** Every name one text gives, with the rule that found it (in text order per rule). */
export function namesIn(text: string): { name: string; from: NameSource }[] {
  const found: { name: string; from: NameSource }[] = [];
  const person = (raw: string | undefined, from: NameSource) => {
    const name = personOf(raw ?? '');
    if (isPersonName(name, from !== 'json')) found.push({ name, from });
  };
  const account = (raw: string | undefined, from: NameSource) => {
    const name = raw?.replace(/\.+$/, ''); // end of a sentence: "… in /home/alice."
    if (name !== undefined && isAccountName(name)) found.push({ name, from });
  };
  const hints = HINTS.found(text);
  // most strings (ids, short values, prose) hold no hint: nothing to look for
  if (hints.size === 0) return found;
  const has = new Set([...hints].map((k) => HINT_RULE[k]));
  if (has.has('git') && text.includes('<')) for (const m of text.matchAll(GIT_IDENTITY)) person(m[1], 'git');
  if (has.has('label')) for (const m of text.matchAll(LABELLED)) person(m[1], 'label');
  if (has.has('user.name')) {
    for (const m of text.matchAll(USER_NAME_SETTING)) person(m[1], 'git-config');
    for (const m of text.matchAll(GIT_CONFIG_SET)) person(m[1] ?? m[2] ?? m[3], 'git-config');
  }
  if (has.has('[user]')) for (const m of text.matchAll(GITCONFIG_USER)) person(m[1], 'git-config');
  if (has.has('env')) for (const m of text.matchAll(GIT_ENV)) person(m[1] ?? m[2] ?? m[3], 'git-config');
  if (has.has('ls'))
    for (const m of text.matchAll(LS_LINE)) {
      account(m[1], 'ls');
      account(m[2], 'ls');
    }
  if (has.has('id')) for (const m of text.matchAll(ID_NAMES)) account(m[1] ?? m[2], 'id');
  if (has.has('json')) for (const m of text.matchAll(JSON_PERSON)) person(m[2], 'json');
  for (const [rule, search] of [
    ['home', HOME_POSIX],
    ['windows', HOME_WINDOWS],
  ] as const)
    if (has.has(rule))
      for (const m of text.matchAll(search)) {
        const at = m.index ?? 0;
        if (homePathMayStart(text, at)) account(m[1], 'home');
      }
  return found;
}

/** A command that prints the user's git name or login on its own (`git config user.name`, `whoami`). */
const PRINTS_NAME =
  /(?:^|[;&|"']\s*|\s)(?:git\s+config\s+(?:--(?:global|local|system|get)\s+)*user\.name|whoami|id\s+-un)\s*(?:$|[;&|"'\\\n])/;

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The text of a tool result: a string, or the text blocks of one. */
function outputText(output: unknown): string | undefined {
  if (typeof output === 'string') return output;
  if (Array.isArray(output))
    return output
      .map((block) => (isObject(block) && typeof block.text === 'string' ? block.text : ''))
      .join('\n');
  return undefined;
}

/** A person: the strings replaced by one placeholder, and the first learned one's place (for the numbering). */
interface Person {
  n: number;
  first: number;
  names: string[];
}

/** The spellings of a full name an account may have: `jane`, `doe`, `janedoe`, `jane.doe`, `jdoe`, `janed`. */
function spellings(name: string): string[] {
  const tokens = name
    .toLowerCase()
    .split(/\s+/)
    .map((t) => t.replace(/\.$/, ''))
    .filter((t) => t !== '');
  const first = tokens[0] ?? '';
  const last = tokens.at(-1) ?? '';
  return [
    ...tokens.filter((t) => t.length >= 3),
    tokens.join(''),
    tokens.join('.'),
    tokens.join('_'),
    tokens.join('-'),
    `${first[0]}${last}`,
    `${first}${last[0]}`,
  ];
}

/**
 * The names of one export, and their search. `learn` takes anything JSON-like (a session's messages, a pair);
 * `find` reports every occurrence in a text. Constant memory: the names, not the texts.
 *
 * People are made when the search is built (after the first pass): full names in the order learned, a full name
 * whose parts all belong to one person joining it (`Jane Doe` after `Jane Q. Doe`); then single names and
 * accounts, one that spells a full name joining its person; people are numbered by their first learned name.
 */
export class Names {
  /** every learned name, in the order first learned */
  private readonly learned = new Map<string, NameSource>();
  /** ids of calls that print a name (the first pass pairs them with their results) */
  private readonly printing = new Set<string>();
  /** built with the search: every replaced string → its person's number */
  private byName = new Map<string, number>();
  private pattern: RegExp | undefined;
  /** bumped on every new name: a redaction made before it may miss one */
  version = 0;

  constructor(given: readonly string[] = []) {
    for (const name of given) if (name.trim() !== '') this.add(name.trim(), 'given');
  }

  /** How many names were learned (or given). */
  get size(): number {
    return this.learned.size;
  }

  /** Every replaced string and its placeholder number, longest first (tests; never in a report). */
  entries(): [string, number][] {
    this.build();
    return [...this.byName];
  }

  /** The placeholder of a name found by `find`. */
  placeholder(name: string): string {
    return `[REDACTED_PERSON_${this.byName.get(name) ?? 0}]`;
  }

  /** Learns the names in a text. */
  learnText(text: string): void {
    for (const { name, from } of namesIn(text)) this.add(name, from);
  }

  /** Learns the names in every string of a JSON-like value (keys too), pairing name-printing calls with results. */
  learn(value: unknown): void {
    this.walk(value, undefined);
  }

  private walk(value: unknown, key: string | undefined): void {
    if (typeof value === 'string') {
      if (key !== undefined && PERSON_KEY.test(key)) {
        const name = personOf(value);
        if (isPersonName(name, false)) this.add(name, 'json');
      }
      this.learnText(value);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) this.walk(item, undefined);
      return;
    }
    if (!isObject(value)) return;
    // a call (ours: {type: tool_call, id, input}; chat form: {id, function: {arguments}}) that prints a name
    if (typeof value.id === 'string' && (value.type === 'tool_call' || isObject(value.function))) {
      const input = isObject(value.function) ? value.function.arguments : value.input;
      const command = typeof input === 'string' ? input : JSON.stringify(input ?? '');
      if (command !== undefined && PRINTS_NAME.test(command)) this.printing.add(value.id);
    }
    // its result (ours: {callId, output}; chat form: {tool_call_id, content}): the first line is the name
    const callId = typeof value.callId === 'string' ? value.callId : value.tool_call_id;
    if (typeof callId === 'string' && this.printing.has(callId)) {
      this.printing.delete(callId);
      const line = outputText(value.output ?? value.content)
        ?.replace(/^\s*(?:\d+→)?/, '')
        .split('\n')[0]
        ?.trim();
      if (line !== undefined && (isPersonName(line) || isAccountName(line))) this.add(line, 'whoami');
    }
    for (const [k, v] of Object.entries(value)) {
      // a key that is an identifier (`type`, `callId`, `file_path`) holds no name; one that is data may
      if (!IDENTIFIER.test(k)) this.learnText(k);
      this.walk(v, k);
    }
  }

  private add(name: string, from: NameSource): void {
    if (this.learned.has(name)) return;
    this.learned.set(name, from);
    this.pattern = undefined;
    this.version++;
  }

  /** People from the learned names, and the search for every string to replace. */
  private build(): void {
    if (this.pattern !== undefined) return;
    const people: Person[] = [];
    const owner = new Map<string, Person>();
    const names = [...this.learned.keys()];
    const join = (person: Person, name: string, at: number) => {
      person.first = Math.min(person.first, at);
      for (const s of [name, ...partsOf(name)])
        if (!owner.has(s)) {
          owner.set(s, person);
          person.names.push(s);
        }
    };
    names.forEach((name, at) => {
      if (!/\s/.test(name)) return;
      const parts = partsOf(name);
      const known = new Set(parts.map((part) => owner.get(part)));
      const same = parts.length > 0 && known.size === 1 ? [...known][0] : undefined;
      const person = owner.get(name) ?? same ?? { n: 0, first: at, names: [] };
      if (!people.includes(person)) people.push(person);
      join(person, name, at);
    });
    const spelled = new Map<string, Person>();
    for (const person of people)
      for (const name of person.names)
        for (const spelling of spellings(name)) if (!spelled.has(spelling)) spelled.set(spelling, person);
    names.forEach((name, at) => {
      if (/\s/.test(name)) return;
      const person = owner.get(name) ?? spelled.get(name.toLowerCase()) ?? { n: 0, first: at, names: [] };
      if (!people.includes(person)) people.push(person);
      join(person, name, at);
    });
    people.sort((a, b) => a.first - b.first);
    people.forEach((person, i) => {
      person.n = i + 1;
    });
    const strings = [...owner.keys()].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    this.byName = new Map(strings.map((s) => [s, (owner.get(s) as Person).n]));
    this.pattern =
      strings.length === 0
        ? /(?!)/g
        : new RegExp(strings.map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'), 'gu');
  }

  /** Every occurrence of a name in the text, on word boundaries, case as learned, longest name first. */
  find(text: string, add: Add): void {
    if (this.learned.size === 0) return;
    this.build();
    for (const m of text.matchAll(this.pattern as RegExp)) {
      const start = m.index ?? 0;
      const end = start + m[0].length;
      if (wordBefore(text, start) || isWordChar(text.codePointAt(end))) continue;
      add(start, end, 'person', PRIORITY.person);
    }
  }
}

const WORD = /[\p{L}\p{N}\p{M}_]/u;
const isWordChar = (code: number | undefined) => code !== undefined && WORD.test(String.fromCodePoint(code));

/** The text before `at` ends in a word (a JSON escape `\n`, `\t`, `\r` does not count as one). */
function wordBefore(text: string, at: number): boolean {
  if (at === 0) return false;
  let code = text.charCodeAt(at - 1);
  // a low surrogate: look at the whole code point
  if (code >= 0xdc00 && code <= 0xdfff && at >= 2) code = text.codePointAt(at - 2) ?? code;
  if (!isWordChar(code)) return false;
  const c = text[at - 1];
  return !((c === 'n' || c === 't' || c === 'r') && text[at - 2] === '\\');
}
