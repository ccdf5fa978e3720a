// The gates as a user sets them: options on `replay` and `runs check`, and a file committed with the sessions
// (`--gates replay-history.toml`, or JSON), the options winning over the file. A share takes 0.95 or 95%.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Command } from 'commander';
import { type GateName, type Gates, gateOptions } from '../replay/gates.js';
import { UserError } from './errors.js';

/** smol-toml's one-file CommonJS build, loaded when a TOML file is read (its ESM build is nine modules). */
function parseToml(text: string): unknown {
  const toml = createRequire(import.meta.url)('smol-toml') as typeof import('smol-toml');
  return toml.parse(text);
}

/** The options as commander gives them. */
export interface GateFlags {
  gates?: string;
  minRecall?: number;
  minPrecision?: number;
  maxDiverged?: number;
  maxMisses?: number;
  maxFailedTurns?: number;
  divergeAfter?: number;
}

const shares = new Set<GateName>(['minRecall', 'minPrecision', 'maxDiverged']);

/** `0.95` or `95%` → 0.95; anything outside 0–1 (0–100%) is refused, naming where it came from. */
export function shareOf(where: string, value: unknown): number {
  const text = String(value).trim();
  const n = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : Number(text);
  if (text === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UserError(`${where} takes a share from 0 to 1 (or 0% to 100%), not '${text}'`);
  return n;
}

/** A count or a turn: a whole number from 0 (a turn from 1). */
export function countOf(where: string, value: unknown, min = 0): number {
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isInteger(n) || n < min)
    throw new UserError(`${where} takes a whole number from ${min}, not '${String(value)}'`);
  return n;
}

function thresholdOf(gate: GateName, where: string, value: unknown): number {
  if (shares.has(gate)) return shareOf(where, value);
  return countOf(where, value, gate === 'divergeAfter' ? 1 : 0);
}

/** Adds the gate options to a command. */
export function addGateOptions(command: Command): Command {
  const gate = (gate: GateName) => (value: string) => thresholdOf(gate, gateOptions[gate], value);
  return command
    .option(
      '--gates <file>',
      'read gates from this TOML or JSON file ([gates] min_recall = 0.95, …); options given here win',
    )
    .option(
      '--min-recall <share>',
      'gate: of the recorded tool calls, the model makes at least this share (0.95 or 95%)',
      gate('minRecall'),
    )
    .option(
      '--min-precision <share>',
      'gate: of the calls the model makes, at least this share are recorded',
      gate('minPrecision'),
    )
    .option(
      '--max-diverged <share>',
      'gate: at most this share of sessions diverge (a turn’s calls differ, or --on-miss stop)',
      gate('maxDiverged'),
    )
    .option(
      '--max-misses <n>',
      'gate: at most this many calls the recording does not hold',
      gate('maxMisses'),
    )
    .option(
      '--max-failed-turns <n>',
      'gate: at most this many turns without an answer',
      gate('maxFailedTurns'),
    )
    .option('--diverge-after <turn>', 'gate: no session diverges before this turn', gate('divergeAfter'));
}

/** The file's key for a gate: `min_recall`, or the option's own name (`min-recall`), or camelCase. */
const fileKeys = (gate: GateName): string[] => {
  const dashed = gateOptions[gate].slice(2);
  return [dashed.replace(/-/g, '_'), dashed, gate];
};

/** The gates of a file: its `[gates]` table (or its top level), every key known, every value checked. */
export function readGatesFile(file: string): Gates {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UserError(
      `--gates ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let value: unknown;
  try {
    value = file.endsWith('.json') ? JSON.parse(text) : parseToml(text);
  } catch (error) {
    throw new UserError(
      `--gates ${file}: not valid ${file.endsWith('.json') ? 'JSON' : 'TOML'}: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  const root = (value ?? {}) as Record<string, unknown>;
  const table = (typeof root.gates === 'object' && root.gates !== null ? root.gates : root) as Record<
    string,
    unknown
  >;
  const gates: Gates = {};
  const known = new Set<string>();
  for (const gate of Object.keys(gateOptions) as GateName[])
    for (const key of fileKeys(gate)) {
      known.add(key);
      if (table[key] !== undefined) gates[gate] = thresholdOf(gate, `${file}: ${key}`, table[key]);
    }
  const unknown = Object.keys(table).filter((key) => !known.has(key) && key !== 'gates');
  if (unknown.length > 0)
    throw new UserError(
      `--gates ${file}: unknown gate ${unknown.join(', ')}`,
      `the gates are ${Object.keys(gateOptions)
        .map((gate) => fileKeys(gate as GateName)[0])
        .join(', ')}`,
    );
  return gates;
}

/** The gates in force: the file's, with each option given on the command line in its place. */
export function gatesOf(flags: GateFlags): Gates {
  const gates: Gates = flags.gates ? readGatesFile(flags.gates) : {};
  for (const gate of Object.keys(gateOptions) as GateName[]) {
    const given = flags[gate];
    if (given !== undefined) gates[gate] = given;
  }
  return gates;
}

/** Whether any gate is set. */
export const anyGate = (gates: Gates): boolean => Object.keys(gates).length > 0;
