import { type Command, Option } from 'commander';
import {
  claudeCodeVersion,
  codexVersion,
  geminiVersion,
  opencodeVersion,
  qwenVersion,
} from '../../drivers/versions.js';
import { openDb } from '../../store/db.js';
import type { Driver } from '../../store/runs.js';
import { UserError } from '../errors.js';
import { addGateOptions, type GateFlags } from '../gates.js';
import { demoOption, useDemo } from './demo.js';
import { atLeast, dbOption, jsonOption, minResultBytes } from './options.js';

export interface ReplayOptions extends GateFlags {
  db: string;
  json?: boolean;
  all?: boolean;
  branches?: boolean;
  model: string;
  baseUrl?: string;
  mode: 'forced' | 'free';
  onMiss: 'error' | 'stop';
  maxTurns: number;
  out: string;
  concurrency: number;
  resume?: string;
  append?: boolean;
  force?: boolean;
  systemPrompt?: string;
  timeout: number;
  retries: number;
  stream?: boolean;
  maxTokens?: number;
  watch: string[];
  exclude: string[];
  elideRepeats?: boolean;
  elideTool: string[];
  maxResultBytes?: number;
  agent: Driver;
  contextLimit?: number;
  opencodeBin?: string;
  claudeBin?: string;
  codexBin?: string;
  qwenBin?: string;
  geminiBin?: string;
  workspace?: string;
  sandbox?: boolean;
  quiet?: boolean;
  demo?: boolean;
  junit?: string;
  report?: string;
}

const positive = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UserError(`${name} takes a whole number from 1, not '${value}'`);
  return n;
};

export function registerReplay(program: Command): void {
  const command = program
    .command('replay')
    .description('ask a model again for recorded turns; every tool result comes from the recording')
    .argument('[targets...]', 'session ids or prefixes, or log files/directories (ingested first)')
    .option('--all', 'replay every stored session')
    .option(
      '--branches',
      'with --all or a log path: take abandoned rewind branches too (sessions of kind branch; off by default)',
    )
    .option(
      '--model <provider:model>',
      'recorded, openai:MODEL, responses:MODEL (the OpenAI Responses API), ollama:MODEL, anthropic:MODEL or gemini:MODEL (the Gemini API)',
      'recorded',
    )
    .option(
      '--base-url <url>',
      'the endpoint: with /v1 for OpenAI-compatible servers (http://127.0.0.1:8000/v1), without for Anthropic ' +
        '(default, openai and responses: OPENAI_BASE_URL, else https://api.openai.com/v1; ollama: http://127.0.0.1:11434/v1; ' +
        'anthropic: ANTHROPIC_BASE_URL, else https://api.anthropic.com; gemini: GOOGLE_GEMINI_BASE_URL, else https://generativelanguage.googleapis.com)',
    )
    .addOption(
      new Option(
        '--mode <mode>',
        'forced: each original turn asked again with its original context; free: the model drives',
      )
        .choices(['forced', 'free'])
        .default('forced'),
    )
    .addOption(
      new Option(
        '--on-miss <policy>',
        'free mode, a call not in the recording: error (tell the model) or stop (end the session)',
      )
        .choices(['error', 'stop'])
        .default('error'),
    )
    .option(
      '--max-turns <factor>',
      'free mode: model calls per session, as a multiple of the original’s turns',
      (v) => {
        const n = Number(v);
        if (!(n > 0)) throw new UserError(`--max-turns takes a positive number, not '${v}'`);
        return n;
      },
      2,
    )
    .option(
      '--out <file>',
      'where pairs go, one JSON line per model turn (- or /dev/stdout, a pipe: written as a stream, the figures then on stderr; no --append or --resume)',
      'pairs.jsonl',
    )
    .option(
      '--concurrency <n>',
      'model calls in flight at once (free mode: sessions at once)',
      positive('--concurrency'),
      4,
    )
    .option(
      '--resume <run-id>',
      "continue a run that was interrupted (its id, a unique prefix of it, or latest): finished turns are not asked again; refused while the run's own process still runs",
    )
    .option('--append', 'add to an --out file that already holds pairs')
    .option('--force', 'overwrite an --out file that already holds pairs')
    .option(
      '--system-prompt <file>',
      'use this system prompt instead of the recorded one (or the per-agent default)',
    )
    .option('--timeout <seconds>', 'per model call', positive('--timeout'), 600)
    .option(
      '--retries <n>',
      'retries of a call on 429/5xx/timeouts, with backoff and Retry-After (0: none)',
      atLeast('--retries', 0),
      3,
    )
    .option('--stream', 'ask the server to stream its answers')
    .option(
      '--max-tokens <n>',
      'cap on each answer (Anthropic requires one: default 4096)',
      positive('--max-tokens'),
    )
    .option(
      '--elide-repeats',
      'show a read-only tool result identical to one already in the context as a one-line marker',
    )
    .option(
      '--elide-tool <name>',
      'treat this tool as read-only for --elide-repeats too, repeatable (the catalogue decides otherwise)',
      collect,
      [],
    )
    .option(
      '--max-result-bytes <n>',
      'cut each tool result shown to the model to this many bytes, with a note saying so',
      atLeast('--max-result-bytes', minResultBytes),
    )
    .option(
      '--watch <dir>',
      'also check this directory for side effects, repeatable (each session’s recorded cwd is checked when it exists here)',
      collect,
      [],
    )
    .option('--exclude <path>', 'leave this path out of the side-effect check, repeatable', collect, [])
    .addOption(
      new Option(
        '--agent <driver>',
        'who runs the agent loop: builtin (ours), opencode, claude-code, codex, qwen or gemini (the real binary, every tool answered from the recording)',
      )
        .choices(['builtin', 'opencode', 'claude-code', 'codex', 'qwen', 'gemini'])
        .default('builtin'),
    )
    .option(
      '--opencode-bin <path>',
      `--agent opencode: this opencode binary (default: the pinned ${opencodeVersion}, else opencode on PATH)`,
    )
    .option(
      '--claude-bin <path>',
      `--agent claude-code: this claude binary (default: claude on PATH; tested with ${claudeCodeVersion})`,
    )
    .option(
      '--codex-bin <path>',
      `--agent codex: this codex binary (default: codex on PATH, else the project's @openai/codex; tested with ${codexVersion})`,
    )
    .option(
      '--qwen-bin <path>',
      `--agent qwen: this qwen binary (default: qwen on PATH, else the project's @qwen-code/qwen-code; tested with ${qwenVersion})`,
    )
    .option(
      '--gemini-bin <path>',
      `--agent gemini: this gemini binary (default: gemini on PATH, else the project's @google/gemini-cli; tested with ${geminiVersion})`,
    )
    .option(
      '--context-limit <tokens>',
      '--agent opencode/codex: the model’s context window (codex: its auto-compaction limit), so the agent compacts long sessions as it would for you',
      positive('--context-limit'),
    )
    .option(
      '--workspace <dir>',
      '--agent opencode/claude-code/codex/qwen/gemini: run the agent in this directory instead of each session’s recorded cwd',
    )
    .option(
      '--sandbox',
      '--agent opencode/claude-code/codex/qwen/gemini: run the agent under bubblewrap with the workspace and --watch directories read-only',
    )
    .option('-q, --quiet', 'no progress on stderr (a bar on a terminal, else a line per finished session)');
  addGateOptions(command)
    .option(
      '--junit <file>',
      'also write the verdict as JUnit XML: one test case per session, one for side effects',
    )
    .option(
      '--report <file>',
      'also write the verdict to FILE.md (Markdown for CI pages, appended to $GITHUB_STEP_SUMMARY when set) and FILE.html (a self-contained page: figures, a divergence plot, each session’s answers side by side, diffed)',
    )
    .addOption(demoOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
No tool is ever run. In forced mode the model's tool calls are not followed and every context holds the
results that were recorded; in free mode each call is answered from the recording (the n-th identical call
gets the n-th recorded result; paths, defaults and whitespace are normalised) and a call the recording does
not hold is a miss, stored with the nearest recorded calls. Each turn becomes one line of --out (schema
replay-history.pair/v2) with the system prompt and tools the agent recorded (our catalogue where it recorded
none). A Claude Code turn whose request Claude Code logged is asked with that request, harness text and all;
with --model anthropic:MODEL it is sent as it was, only the model ours. A Codex turn is sent to
--model responses:MODEL as the Responses input Codex sent (developer parts, reasoning, namespaces, custom
calls). The run
and its figures go into the store (see: replay-history runs). A failed turn is recorded with its error and
the run goes on; a wrong key or unknown model stops it at once. Killed? Rerun with --resume RUN_ID.

The run is checked for side effects as \`replay-history verify\` does: a manifest of every entry under the
recorded cwd of each session (where it exists on this machine) and each --watch directory before and after,
with a file-system watcher meanwhile. The store, the pairs file and the checker's own files are left out. Any
change is stored with the run (replay-history runs RUN_ID lists them) and makes the run exit 3.

Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY; local servers need none.

Gates turn the run into a CI verdict: each is a threshold on one of its figures (--min-recall, --min-precision,
--max-diverged, --max-misses, --max-failed-turns, --diverge-after), set here or in a --gates file committed
with the sessions (TOML or JSON: [gates] min_recall = 0.95, max_misses = 0, …; an option given here wins). A
failed gate is said with its figure, its threshold and the sessions that made it fail, and exits 4. The same
gates judge a finished run: replay-history runs check RUN_ID. --junit FILE writes one test case per session
(failed when a failed gate names it or a turn of it failed) and one for side effects.

Off a terminal a line per finished session goes to stderr (a progress bar on one; --quiet for neither). Exit
codes: 0 done · 1 a turn failed, or the run was stopped by the provider · 2 a usage error (found before anything
runs) · 3 side effects · 4 a gate failed · 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP: the run is marked
interrupted and --resume RUN_ID (or a unique prefix of it, or latest) goes on. When several apply: 2, then 3,
then 4, then 1 (side effects are said even when turns failed or gates too).

--agent opencode runs the real opencode binary headless in each session's recorded cwd (or --workspace), in a
private HOME and config of its own: a plugin overrides every built-in tool with one that returns the recorded
result (tools offered to the model byte-identical to opencode's own), and stops any other tool. Its model
calls go through a loopback proxy of ours to --model (recorded, openai:MODEL or ollama:MODEL: an
OpenAI-compatible endpoint), and each agent step becomes a pair, with the prompts exactly as opencode sends
them. Title and summary calls are left out of the pairs. Always free mode: the first user message is piped
in, each later one continues the same opencode session.

--agent claude-code runs the real claude binary headless (claude -p, then --resume for each later prompt) in a
private HOME, config dir and TMPDIR, with no user or project settings and no MCP server. A PreToolUse hook
denies every tool call before it runs (a shell script that needs nothing of ours), and a loopback proxy on the
Anthropic Messages wire gives the model the recorded result in its place, by tool_use id. --model recorded, or
anthropic:MODEL (ANTHROPIC_BASE_URL / --base-url: any server speaking /v1/messages). Sub-agents run in place;
other agents' sessions have their tools mapped to Claude Code's. Always free mode.

--agent codex runs the real codex binary headless (codex exec, then exec resume for each later prompt) in a
private HOME, CODEX_HOME and TMPDIR with a config of ours alone, under its own --sandbox read-only. A PreToolUse
hook denies every tool call before it runs; Codex only runs hooks with --dangerously-bypass-hook-trust, so a
probe run proves the hook stops a call before any session is replayed, and the replay refuses if it does not.
A loopback proxy on the Responses wire gives the model the recorded output in its place, by call_id. --model
recorded, or responses:MODEL (OPENAI_BASE_URL / --base-url: any server speaking /v1/responses). Sub-agents are
not run: spawn_agent and wait_agent get their recorded results. Always free mode.

--agent qwen runs the real qwen binary headless (the prompt on stdin, --output-format json, then --resume for
each later prompt) in a private HOME and TMPDIR with settings of ours alone (the system layer; a workspace with
its own .qwen/settings.json is not replayed: its hooks and MCP servers would run). A PreToolUse hook denies every
tool call before it runs; Qwen runs a tool whose hook fails, so a probe run proves the hook stops a call before
any session is replayed, and the replay refuses if it does not. A loopback proxy on the chat-completions wire
gives the model the recorded result in its place, by tool_call_id. --model recorded, or openai:MODEL
(OPENAI_BASE_URL / --base-url: any OpenAI-compatible server) or ollama:MODEL. The memory extractor and the
compression summarizer are left out of the pairs; other agents' sessions have their shell commands and writes
mapped to Qwen's tools. Always free mode.

--agent gemini runs the real gemini binary headless the same way (--output-format json, --model the recorded
one, then --resume for each later prompt) in a private HOME and TMPDIR with settings of ours alone (the user
layer; the machine's system layers are not read, and a workspace with its own .gemini/settings.json is not
replayed). A BeforeTool hook denies every tool call before it runs, and a probe run proves it does before any
session is replayed. The Gemini API names no calls: a loopback proxy on the Gemini wire gives each call an id of
its own and the model the recorded result under it. --model recorded, or gemini:MODEL (GEMINI_API_KEY /
--base-url: any server speaking /v1beta/models/MODEL:streamGenerateContent). The compression summarizer is left
out of the pairs. Always free mode.

Examples:
  $ replay-history replay --demo
  $ replay-history replay sample-sessions --force
  $ replay-history replay 6f1c2a34 --model ollama:qwen2.5-coder:7b --out qwen.jsonl
  $ replay-history replay --all --model openai:gpt-4o-mini --concurrency 8 --json
  $ replay-history replay ~/.claude/projects --branches --out with-branches.jsonl
  $ replay-history replay 6f1c2a34 --mode free --on-miss stop --model anthropic:claude-sonnet-4-6
  $ replay-history replay 01a23320 --model responses:gpt-5.5 --out codex.jsonl
  $ replay-history replay 9c1bacd1 --model gemini:gemini-2.5-flash --stream --out gemini.jsonl
  $ replay-history replay --resume run_20261130T101500_3f9a2c
  $ replay-history replay --resume latest
  $ replay-history replay 6f1c2a34 --model openai:qwen --base-url http://127.0.0.1:8000/v1 --stream --max-tokens 2048
  $ replay-history replay --all --model ollama:qwen2.5-coder:7b --elide-repeats --max-result-bytes 8192 --quiet
  $ replay-history replay 6f1c2a34 --elide-repeats --elide-tool mcp__db__query
  $ replay-history replay 9a8b7c6d --model openai:qwen --system-prompt prompt.txt --out more.jsonl --append
  $ replay-history replay 6f1c2a34 --mode free --max-turns 1.5 --timeout 120 --retries 5
  $ replay-history replay 6f1c2a34 --watch ~/src/app --exclude ~/src/app/node_modules
  $ replay-history replay --all --model openai:qwen --min-recall 95% --min-precision 0.9 --max-misses 0
  $ replay-history replay --all --max-diverged 10% --max-failed-turns 0 --diverge-after 3 --junit replay.xml --report replay
  $ replay-history replay sessions/ --gates replay-history.toml --model ollama:qwen2.5-coder:7b
  $ replay-history replay c0faf5aa --agent opencode --model ollama:qwen2.5-coder:7b
  $ replay-history replay c0faf5aa --agent opencode --workspace /tmp/todo-api --sandbox
  $ replay-history replay c0faf5aa --agent opencode --opencode-bin ~/.opencode/bin/opencode --context-limit 32768
  $ replay-history replay 5a5a5a5a --agent claude-code --workspace /tmp/demo-app --sandbox
  $ replay-history replay 5a5a5a5a --agent claude-code --claude-bin ~/.local/bin/claude --model anthropic:claude-sonnet-4-6
  $ replay-history replay 01a23320 --agent codex --workspace /tmp/demo-app --context-limit 100000
  $ replay-history replay 01a23320 --agent codex --codex-bin ~/.npm-global/bin/codex --sandbox
  $ replay-history replay 01a23320 --agent codex --model responses:gpt-5.5 --base-url http://127.0.0.1:8000/v1
  $ replay-history replay a433a22d --agent qwen --workspace /tmp/demo-app --sandbox
  $ replay-history replay a433a22d --agent qwen --qwen-bin ~/.npm-global/bin/qwen --model openai:qwen3-coder-plus --base-url http://127.0.0.1:8000/v1
  $ replay-history replay 654ecb71 --agent gemini --workspace /tmp/demo-app
  $ replay-history replay 654ecb71 --agent gemini --gemini-bin ~/.npm-global/bin/gemini --model gemini:gemini-2.5-pro`,
    )
    .action(async (targets: string[], options: ReplayOptions, command: Command) => {
      if (options.resume) refuseWithResume(command);
      refuseContradictions(targets, options);
      if (options.demo) ({ targets, options } = useDemo(targets, options, command));
      const { replay } = await import('./replay-action.js');
      const db = openDb(options.db, { command: 'replay' });
      try {
        process.exitCode = await replay(db, targets, options, command.getOptionValueSource('mode') === 'cli');
      } finally {
        db.close();
      }
    });
}

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * Options that contradict each other, or that the command would silently ignore, are refused before anything
 * is read or written.
 */
function refuseContradictions(targets: string[], options: ReplayOptions): void {
  if (options.append && options.force)
    throw new UserError(
      '--append and --force contradict each other: --append keeps the pairs in --out, --force deletes them',
    );
  if (options.all && targets.length > 0)
    throw new UserError(
      `--all replays every stored session: drop it or the targets (${targets.slice(0, 3).join(' ')}${targets.length > 3 ? ' …' : ''})`,
    );
  // (--resume with options is refused by refuseWithResume, before this.)
  if (options.resume && targets.length > 0)
    throw new UserError('--resume takes no targets: the run knows its sessions');
}

/** With --resume the run goes on with the options it was started with: changing one is refused, not ignored. */
function refuseWithResume(command: Command): void {
  const kept = new Set(['resume', 'db', 'json', 'quiet']);
  const given = command.options
    .filter((option) => !kept.has(option.attributeName()))
    .filter((option) => command.getOptionValueSource(option.attributeName()) === 'cli')
    .map((option) => option.long ?? option.flags);
  if (given.length > 0)
    throw new UserError(
      `--resume goes on with the options the run was started with: ${given.join(', ')} cannot be changed`,
      'start a new run to use other options (replay-history runs RUN_ID shows the run’s own)',
    );
}
