// Sessions of other agents replayed through Claude Code: its model calls Claude Code's tools (`Read`, `Bash`,
// …), the recording holds the source agent's (`read`, `exec_command`, …). The tables are opencode's
// (src/drivers/opencode/mapping.ts: one per source agent, both directions), with opencode's names as the
// pivot: a Claude Code call becomes opencode's (the Claude Code table read backwards), then the source agent's.
// A call with no counterpart on either leg is a miss. Claude Code's own older sessions call the sub-agent tool
// `Task`; 2.1.3xx calls it `Agent`. Pure.
import { opencodeCall, type RecordedName, recordedNames } from '../opencode/mapping.js';

/** The sub-agent tool under its older name (the tables', and Claude Code's before 2.1.3xx). */
const olderAgentName = 'Task';

/** The calls of a recording of `agent` that a Claude Code call may stand for, most likely first. */
export function recordedFor(agent: string, name: string, input: unknown): RecordedName[] {
  const older = name === 'Agent' ? olderAgentName : name;
  if (agent === 'claude-code')
    return older === name
      ? [{ name, input }]
      : [
          { name, input },
          { name: older, input },
        ];
  const asOpencode = opencodeCall('claude-code', older, input);
  if (!asOpencode) return [];
  return recordedNames(agent, asOpencode.name, asOpencode.input);
}

/** A recorded call of `agent` as Claude Code would make it (`--model recorded`), or undefined: none maps. */
export function claudeCall(agent: string, name: string, input: unknown): RecordedName | undefined {
  const named =
    agent === 'claude-code'
      ? { name, input }
      : (() => {
          const asOpencode = opencodeCall(agent, name, input);
          return asOpencode ? recordedNames('claude-code', asOpencode.name, asOpencode.input)[0] : undefined;
        })();
  return named?.name === olderAgentName ? { ...named, name: 'Agent' } : named;
}
