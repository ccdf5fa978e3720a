import { type Command, Option } from 'commander';
import type { TrainOn } from '../../export/build.js';
import type { Unit } from '../../export/sample.js';
import { openDb } from '../../store/db.js';
import { UserError } from '../errors.js';
import { atLeast, dbOption, jsonOption, minResultBytes } from './options.js';

type FormatName = 'openai' | 'trl' | 'sharegpt' | 'axolotl' | 'dpo';

export interface ExportOptions {
  db: string;
  json?: boolean;
  from: string;
  format: FormatName;
  unit?: Unit;
  trainOn?: TrainOn;
  split?: number;
  seed: number;
  redact: boolean;
  redactName: string[];
  includeInjected?: boolean;
  branches?: boolean;
  elideRepeats?: boolean;
  elideTool: string[];
  maxResultBytes?: number;
  minTurns: number;
  maxTokens?: number;
  tokenizer?: string;
  systemPrompt?: string;
  out?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      'write training data: the original sessions or a replay run, as OpenAI, TRL, ShareGPT, axolotl or DPO rows',
    )
    .option(
      '--from <source>',
      'original (the stored sessions), run:RUN_ID, or latest (the last run)',
      'original',
    )
    .addOption(
      new Option('--format <format>', 'the trainer’s format')
        .choices(['openai', 'trl', 'sharegpt', 'axolotl', 'dpo'])
        .default('openai'),
    )
    .addOption(
      new Option(
        '--unit <unit>',
        'one sample per session (per compaction segment), per real user turn, or per model turn (default: session for original, model-turn for runs)',
      ).choices(['session', 'user-turn', 'model-turn']),
    )
    .addOption(
      new Option(
        '--train-on <what>',
        'assistant messages to learn: replayed (the run’s new turns), all-assistant, or last (default: replayed for runs; all-assistant, or last per model turn, for original)',
      ).choices(['replayed', 'all-assistant', 'last']),
    )
    .option(
      '--split <fraction>',
      'share of sessions in the train file; the rest go to validation (needs --out)',
      (value) => {
        const n = Number(value);
        if (!(n > 0 && n < 1))
          throw new UserError(`--split takes a fraction between 0 and 1, not '${value}'`);
        return n;
      },
    )
    .option(
      '--seed <n>',
      'seed of the split: the same seed, the same split',
      (value) => {
        const n = Number(value);
        if (!Number.isInteger(n)) throw new UserError(`--seed takes a whole number, not '${value}'`);
        return n;
      },
      0,
    )
    .option(
      '--redact',
      'replace secrets, emails, home-path user names and people’s names by placeholders (the default)',
      true,
    )
    .option('--no-redact', 'write the text as recorded')
    .option(
      '--redact-name <name>',
      'also replace this person’s name (and its parts) wherever it appears, repeatable: --redact-name "Jane Doe"',
      collect,
      [],
    )
    .option('--include-injected', 'keep text the harness wrote into user turns (reminders, IDE context)')
    .option(
      '--branches',
      'also export abandoned rewind branches (sessions of kind branch); off by default, as each repeats the prefix it shares with its session',
    )
    .option(
      '--elide-repeats',
      'show repeated identical read-only results as a marker, as replay --elide-repeats',
    )
    .option(
      '--elide-tool <name>',
      'with --elide-repeats: count this tool as read-only too, repeatable',
      collect,
      [],
    )
    .option(
      '--max-result-bytes <n>',
      'cut each tool result to this many bytes, with a note',
      atLeast('--max-result-bytes', minResultBytes),
    )
    .option(
      '--min-turns <n>',
      'leave out sessions with fewer model turns',
      (value) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 0)
          throw new UserError(`--min-turns takes a whole number, not '${value}'`);
        return n;
      },
      0,
    )
    .option(
      '--max-tokens <n>',
      'make every row fit N tokens: the oldest context of a turn row left out first (never the trained turn), a session row split into rows that fit; the cut said in the row',
      (value) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 256)
          throw new UserError(`--max-tokens takes a whole number of at least 256, not '${value}'`);
        return n;
      },
    )
    .option(
      '--tokenizer <name|file>',
      'count tokens with o200k (OpenAI, the default) or the trained model’s own tokenizer.json (a file, or the folder holding it)',
    )
    .option(
      '--system-prompt <file>',
      'give every row this system prompt (the one your deployment will run the model with) in place of the recorded one',
    )
    .option(
      '--out <file>',
      'write here (default, or -: stdout); with --split, FILE.train.jsonl and FILE.validation.jsonl',
    )
    .addOption(dbOption())
    .addOption(jsonOption().default(false))
    .addHelpText(
      'after',
      `
Rows are streamed, one JSON object per line, with constant memory. Every sample is cleaned (harness-injected
text left out, a tool result without its call dropped, sessions with no assistant turn and failed replay turns
skipped), redacted (API keys and tokens, private keys, JWTs, bearer tokens, .env secrets, database URLs with
passwords, emails, the user name in home paths, people's names; the same secret gets the same placeholder
everywhere), rendered for the trainer, and dropped if it is an exact duplicate.

People's names are learned from the sessions exported, in a first pass before any row is written: git Author:,
Commit: and Committer: lines, git user.name settings, ls -l owner and group columns, id output, JSON fields such
as "created_by" or "author", the account name in home paths, and every --redact-name. Each person becomes
[REDACTED_PERSON_n] wherever the name, a part of it of 3+ letters ("Jane", "Doe") or an account spelling it
("jdoe") appears, case-sensitively on word boundaries; bots, placeholders (GitHub, Claude, Your Name), system
accounts (root, nobody, staff, wheel) and common words are never learned. Counted as "person" in the report. The split is by a hash of the session, so a session is
never on both sides. The store is never changed.

--max-tokens counts a row as a trainer does, roughly: its tools' JSON, each message's text and arguments, and 5 tokens
a message for the chat template (leave some room). Rows too long even with every earlier message left out are
dropped and counted.

Redaction's rules scan each text on threads of their own, ahead of the row being written (one per core beyond
the first, at most 4; REPLAY_HISTORY_SCAN_THREADS=N sets how many, 0 for none). The rows are the same however
many there are.

The report (samples, tokens, row lengths p50/p95/max before and after --max-tokens, skips, redactions, warnings)
goes to stderr; --json prints it as JSON (on stdout
when the rows go to --out, else on stderr).

Formats: openai (chat fine-tuning: arguments as JSON strings, weight 0/1), trl (messages + tools, arguments as
objects; prompt/completion when only the end is trained), sharegpt (LLaMA-Factory; dataset_info.json written
beside --out), axolotl (chat_template with a train flag per message), dpo (from a run: prompt, chosen = the
original turn, rejected = the replayed one, only where they differ).

Examples:
  $ replay-history export --format openai --out train.jsonl
  $ replay-history export --from latest --format trl --split 0.9 --seed 7 --out qwen.jsonl
  $ replay-history export --from run:run_20261130T101500_3f9a2c --format dpo --out prefs.jsonl
  $ replay-history export --format sharegpt --unit user-turn --elide-repeats --min-turns 3 --out data/agent.json
  $ replay-history export --unit model-turn --train-on last --max-result-bytes 4096 --out turns.jsonl --json
  $ replay-history export --format axolotl --train-on all-assistant --include-injected --out all.jsonl
  $ replay-history export --format openai --branches --out with-branches.jsonl
  $ replay-history export --redact-name "Jane Doe" --redact-name jdoe --out train.jsonl
  $ replay-history export --no-redact --elide-repeats --elide-tool mcp__db__query --out raw.jsonl
  $ replay-history export --format sharegpt --system-prompt ./deploy/system.txt --out agent.jsonl
  $ replay-history export --format trl --max-tokens 8192 --tokenizer ./Qwen2.5-Coder-7B/tokenizer.json --out fit.jsonl`,
    )
    .action(async (options: ExportOptions) => {
      const { runExport } = await import('./export-action.js');
      const db = openDb(options.db, { readOnly: true });
      try {
        await runExport(db, options);
      } finally {
        db.close();
      }
    });
}
