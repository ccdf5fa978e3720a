import { sha256 } from './canonical-json.js';
import type { AgentId } from './session.js';

/** Length of a session id: 24 hex digits (96 bits) is far past collision range for any one person's history. */
const idLength = 24;

/** The stable id of a session: the same agent and agent-side id always give the same id. */
export function sessionId(agent: AgentId, sourceId: string): string {
  return sha256(`${agent}\0${sourceId}`).slice(0, idLength);
}

/** The short form shown in listings (like a git short hash). */
export function shortId(id: string): string {
  return id.slice(0, 8);
}
