// Sessions of other agents replayed through Codex: its model calls Codex's tools (`exec_command`,
// `apply_patch`), the recording holds the source agent's (`Bash`, `write`, …). opencode's tables
// (src/drivers/opencode/mapping.ts, one per source agent, both directions) are the pivot: a shell command is
// opencode's `bash`, and a patch that adds one file with whole lines is opencode's `write` of that file — the
// only two a Codex call can stand for exactly. An edit has no exact patch (a patch names lines, an edit a
// string that may start mid-line, and the file is not in the recording): it keeps its own name, Codex answers
// it as an unsupported call, and the proxy puts the recorded output in place by call_id. Pure.
import { isAbsolute, join, relative } from 'node:path';
import { opencodeCall, type RecordedName, recordedNames } from '../opencode/mapping.js';

type Args = Record<string, unknown>;

const asArgs = (value: unknown): Args =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {};

/** A patch adding one file, as apply_patch takes it: each line of `content` (which ends with one) a `+` line. */
export function addFilePatch(path: string, content: string): string | undefined {
  if (content !== '' && !content.endsWith('\n')) return undefined;
  const lines = content === '' ? [] : content.slice(0, -1).split('\n');
  return `*** Begin Patch\n*** Add File: ${path}\n${lines.map((line) => `+${line}\n`).join('')}*** End Patch\n`;
}

/** The file and content of a patch that adds exactly one file and does nothing else; else undefined. */
export function addedFile(patch: string): { path: string; content: string } | undefined {
  const lines = patch.replace(/\n$/, '').split('\n');
  if (lines[0] !== '*** Begin Patch' || lines.at(-1) !== '*** End Patch') return undefined;
  const header = /^\*\*\* Add File: (.+)$/.exec(lines[1] ?? '');
  if (!header) return undefined;
  const body = lines.slice(2, -1);
  if (!body.every((line) => line.startsWith('+'))) return undefined;
  return { path: header[1] as string, content: body.map((line) => `${line.slice(1)}\n`).join('') };
}

/** The calls of a recording of `agent` that a Codex call may stand for, most likely first. */
export function recordedFor(agent: string, name: string, input: unknown, cwd: string): RecordedName[] {
  if (agent === 'codex') return [{ name, input }];
  const args = asArgs(input);
  if (name === 'exec_command' && typeof args.cmd === 'string')
    return recordedNames(agent, 'bash', { command: args.cmd });
  if (name === 'apply_patch' && typeof args.input === 'string') {
    const added = addedFile(args.input);
    if (!added) return [];
    const filePath = isAbsolute(added.path) ? added.path : join(cwd, added.path);
    return recordedNames(agent, 'write', { filePath, content: added.content });
  }
  return [];
}

/**
 * A recorded call of `agent` as Codex's model would make it (`--model recorded`): a shell command as
 * exec_command, a write of whole lines as an apply_patch adding the file (free-form, its path relative to the
 * workspace as Codex writes them); undefined where Codex has no exact counterpart.
 */
export function codexCall(
  agent: string,
  name: string,
  input: unknown,
  cwd: string,
): (RecordedName & { freeform?: boolean }) | undefined {
  if (agent === 'codex') return { name, input };
  const asOpencode = opencodeCall(agent, name, input);
  if (!asOpencode) return undefined;
  const args = asArgs(asOpencode.input);
  if (asOpencode.name === 'bash' && typeof args.command === 'string')
    return { name: 'exec_command', input: { cmd: args.command } };
  if (asOpencode.name === 'write' && typeof args.filePath === 'string' && typeof args.content === 'string') {
    const path = relative(cwd, args.filePath);
    if (path === '' || path.startsWith('..') || isAbsolute(path)) return undefined;
    const patch = addFilePatch(path, args.content);
    return patch === undefined ? undefined : { name: 'apply_patch', input: patch, freeform: true };
  }
  return undefined;
}
