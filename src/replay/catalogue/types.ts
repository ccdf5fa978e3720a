// The shapes of the tool catalogue: what a replay offers the model in place of the original agent's tools.
// Types only.

import type { AgentId } from '../../model/session.js';

/** The subset of JSON Schema the catalogue writes; other keywords pass through untouched. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  description?: string;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  [key: string]: unknown;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** Always `type: 'object'`. */
  parameters: JsonSchema;
  readOnly: boolean;
  /** inferred from recorded calls, not from the catalogue */
  inferred?: boolean;
  /**
   * The tool as its agent's own wire offers it, where that is no function of the fields above (Codex's
   * free-form apply_patch with its grammar, its hosted web_search, its tool_search).
   */
  wire?: Readonly<Record<string, unknown>>;
}

export interface Catalogue {
  agent: AgentId;
  tools: readonly ToolSpec[];
  /** a short default system prompt written by us, used when the log has none */
  systemPrompt: string;
}
