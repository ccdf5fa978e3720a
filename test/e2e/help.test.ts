import { describe, expect, it } from 'vitest';
import { run } from '../helpers/cli.js';

// `--help` is where a user learns a command: every option is shown in use in an example, and no default is
// printed twice or as something that says nothing ("(default: [])", "(default: false)").
const commands = [
  'ingest',
  'sessions',
  'show',
  'replay',
  'runs',
  'runs check',
  'runs compare',
  'stats',
  'export',
  'verify',
];
/** Options every command has, explained once in the README and by their own text. */
const common = new Set(['--help', '--db', '--json']);

function sections(help: string): { options: string[]; examples: string } {
  const start = help.indexOf('Options:');
  const end = help.indexOf('\n\n', start);
  const optionsPart = help.slice(start, end === -1 ? undefined : end);
  const options = [
    ...new Set([...optionsPart.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1] as string)),
  ];
  const examples = help.slice(help.lastIndexOf('Examples:'));
  return { options, examples };
}

describe('--help', () => {
  it.each(commands)('%s: every option appears in an example, and defaults are said once', async (command) => {
    const result = await run([...command.split(' '), '--help']);
    expect(result.exitCode).toBe(0);
    const help = result.stdout;
    expect(help).toContain('Examples:');
    const { options, examples } = sections(help);
    expect(options.length).toBeGreaterThan(0);
    // A switch and its --no- form are one choice: showing either shows it.
    const shown = (option: string) =>
      examples.includes(option) ||
      examples.includes(option.startsWith('--no-') ? `--${option.slice(5)}` : `--no-${option.slice(2)}`);
    const unused = options.filter((option) => !common.has(option)).filter((option) => !shown(option));
    expect({ command, unused }).toEqual({ command, unused: [] });
    expect(help).not.toMatch(/\(default: \[\]\)/);
    expect(help).not.toMatch(/\(default: (true|false)\)/);
    expect(help).not.toMatch(/\(the default\)[^\n]*\(default:/);
    // One "(default: …)" per option at most.
    for (const block of help.split(/\n(?= {2}-)/))
      expect(block.match(/\(default:/g)?.length ?? 0).toBeLessThan(2);
  });

  it('the program help lists every command and the exit codes with their precedence', async () => {
    const result = await run(['--help']);
    expect(result.exitCode).toBe(0);
    for (const command of commands.filter((name) => !name.includes(' ')))
      expect(result.stdout).toMatch(new RegExp(`^ {2}${command}\\b`, 'm'));
    expect(result.stdout).toContain('When several apply: 2 (found');
    expect(result.stdout).toContain('then 3 (side effects, even in a run that also failed), then 4, then 1');
    expect(result.stdout).toMatch(/4 a gate\s+failed \(replay, runs check\)/);
  });
});
