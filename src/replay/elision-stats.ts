// Figures for `stats --elision`: what eliding repeated read-only results would change in the contexts of stored
// sessions. Pure apart from the tokenizer it is given.
import { outputText, type Session, type ToolResult } from '../model/session.js';
import { turns } from '../model/turns.js';
import { type ElideOptions, elideRepeats, type ResultFate } from './elide.js';

export interface ToolFigures {
  results: number;
  elided: number;
  truncated: number;
  bytesBefore: number;
  bytesAfter: number;
  tokensBefore: number;
  tokensAfter: number;
}

export interface ElisionFigures {
  sessions: number;
  /** Each tool result counted once, as the first turn context showing it had it. */
  perTool: Map<string, ToolFigures>;
  /** Summed over every turn's context, i.e. what a forced replay sends: a repeat costs once per later turn. */
  contexts: { turns: number; bytesBefore: number; bytesAfter: number };
}

function zero(): ToolFigures {
  return {
    results: 0,
    elided: 0,
    truncated: 0,
    bytesBefore: 0,
    bytesAfter: 0,
    tokensBefore: 0,
    tokensAfter: 0,
  };
}

export function emptyFigures(): ElisionFigures {
  return { sessions: 0, perTool: new Map(), contexts: { turns: 0, bytesBefore: 0, bytesAfter: 0 } };
}

/**
 * Adds one session to the figures. Each tool result is counted once, with the fate it had in the first turn
 * context that shows it (so a result after a compaction, or in the preserved tail, is judged by what the model
 * had then, as a replay would). A result no model turn was shown (the last turn's) is not counted, nor one of the
 * history a resumed session inherited (it is counted with the session it came from). Memory: one session.
 */
export function addSession(
  figures: ElisionFigures,
  session: Session,
  own: number,
  options: ElideOptions,
  countTokens: (text: string) => number,
): void {
  figures.sessions++;
  const counted = new WeakSet<ToolResult>();
  for (const message of session.messages.slice(0, own))
    for (const part of message.parts) if (part.type === 'tool_result') counted.add(part);
  for (const turn of turns(session.messages, own)) {
    const shown = elideRepeats(turn.context, options);
    figures.contexts.turns++;
    for (const fate of shown.fates) {
      figures.contexts.bytesBefore += fate.bytes;
      figures.contexts.bytesAfter += fate.shownBytes;
    }
    // The fates come in the order of the context's tool results; the shown messages keep every position.
    let next = 0;
    turn.context.forEach((message, m) => {
      message.parts.forEach((part, p) => {
        if (part.type !== 'tool_result') return;
        const fate = shown.fates[next++] as ResultFate;
        if (counted.has(part)) return;
        counted.add(part);
        const after = shown.messages[m]?.parts[p] as ToolResult;
        count(figures, fate, outputText(part.output), outputText(after.output), countTokens);
      });
    });
  }
}

function count(
  figures: ElisionFigures,
  fate: ResultFate,
  before: string,
  after: string,
  countTokens: (text: string) => number,
): void {
  const tool = fate.name || '(unknown)';
  const row = figures.perTool.get(tool) ?? zero();
  row.results++;
  row.bytesBefore += fate.bytes;
  row.bytesAfter += fate.shownBytes;
  const tokens = countTokens(before);
  row.tokensBefore += tokens;
  if (fate.fate === 'shown') row.tokensAfter += tokens;
  else {
    row.tokensAfter += countTokens(after);
    if (fate.fate === 'elided') row.elided++;
    else row.truncated++;
  }
  figures.perTool.set(tool, row);
}

/** All tools together. */
export function totals(figures: ElisionFigures): ToolFigures {
  const sum = zero();
  for (const row of figures.perTool.values()) {
    for (const key of Object.keys(sum) as (keyof ToolFigures)[]) sum[key] += row[key];
  }
  return sum;
}
