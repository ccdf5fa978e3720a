// Sessions of other agents replayed through Qwen Code or Gemini CLI (one lineage: Qwen Code is a fork of Gemini
// CLI and kept its tool names): its model calls the lineage's tools (`run_shell_command {command}`,
// `write_file {file_path, content}`, …), the recording holds the source agent's (`Bash`, `write`,
// `exec_command`, …). A session of either agent of the lineage is replayed through the other as it is: where
// a tool's name and arguments are the same, the call is the same (a read of a whole file, a shell command, a
// write); where they differ (Gemini's `replace` against Qwen's `edit`, read ranges), the call is not found and
// is a miss, never a wrong answer. opencode's tables (src/drivers/opencode/mapping.ts, one per source agent,
// both directions) are the pivot, as for Codex (src/drivers/codex/mapping.ts): a shell command is opencode's
// `bash`, a write of a whole file opencode's `write` — the two a Qwen call stands for exactly. Any other recorded
// call keeps its own name under `--model recorded`; Qwen answers it as an unknown tool and the proxy puts the
// recorded result in place by tool_call_id. Pure.
import { opencodeCall, type RecordedName, recordedNames } from '../opencode/mapping.js';

/** The agents whose tools these are. */
export const lineage: readonly string[] = ['qwen', 'gemini'];

type Args = Record<string, unknown>;

const asArgs = (value: unknown): Args =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : {};

/** The calls of a recording of `agent` that a Qwen call may stand for, most likely first. */
export function recordedFor(agent: string, name: string, input: unknown): RecordedName[] {
  if (lineage.includes(agent)) return [{ name, input }];
  const args = asArgs(input);
  if (name === 'run_shell_command' && typeof args.command === 'string')
    return recordedNames(agent, 'bash', { command: args.command });
  if (name === 'write_file' && typeof args.file_path === 'string' && typeof args.content === 'string')
    return recordedNames(agent, 'write', { filePath: args.file_path, content: args.content });
  return [];
}

/**
 * A recorded call of `agent` as the lineage's model would make it (`--model recorded`): a shell command as
 * run_shell_command, a write as write_file; undefined where Qwen has no exact counterpart.
 */
export function qwenCall(agent: string, name: string, input: unknown): RecordedName | undefined {
  if (lineage.includes(agent)) return { name, input };
  const asOpencode = opencodeCall(agent, name, input);
  if (!asOpencode) return undefined;
  const args = asArgs(asOpencode.input);
  if (asOpencode.name === 'bash' && typeof args.command === 'string')
    return { name: 'run_shell_command', input: { command: args.command } };
  if (asOpencode.name === 'write' && typeof args.filePath === 'string' && typeof args.content === 'string')
    return { name: 'write_file', input: { file_path: args.filePath, content: args.content } };
  return undefined;
}
