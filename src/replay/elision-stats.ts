// Figures for `stats --elision`: what eliding repeated read-only results would change in the contexts of stored
// sessions. Pure apart from the tokenizer it is given.
import { type Message, outputText, type Part, type Session } from '../model/session.js';
import { turns } from '../model/turns.js';
import { type ElideOptions, Elider, elideRepeats, type ResultFate, showThrough } from './elide.js';

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
  /** Each tool result counted once, as it stands in the transcript (after a compaction it starts afresh). */
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

function resultTexts(messages: readonly Message[]): string[] {
  const texts: string[] = [];
  for (const message of messages)
    for (const part of message.parts as Part[])
      if (part.type === 'tool_result') texts.push(outputText(part.output));
  return texts;
}

/**
 * Adds one session to the figures. `own` is where its own messages start (a resumed session's inherited history is
 * counted with the session it came from, but still sets the baselines). Memory: one session at a time.
 */
export function addSession(
  figures: ElisionFigures,
  session: Session,
  own: number,
  options: ElideOptions,
  countTokens: (text: string) => number,
): void {
  figures.sessions++;
  const elider = new Elider(options);
  showThrough(elider, session.messages.slice(0, own));
  const mine = session.messages.slice(own);
  const { messages, fates } = showThrough(elider, mine);
  const before = resultTexts(mine);
  const after = resultTexts(messages);
  fates.forEach((fate: ResultFate, index) => {
    const tool = fate.name || '(unknown)';
    const row = figures.perTool.get(tool) ?? zero();
    row.results++;
    row.bytesBefore += fate.bytes;
    row.bytesAfter += fate.shownBytes;
    const original = before[index] ?? '';
    const tokens = countTokens(original);
    row.tokensBefore += tokens;
    if (fate.fate === 'shown') row.tokensAfter += tokens;
    else {
      row.tokensAfter += countTokens(after[index] ?? '');
      if (fate.fate === 'elided') row.elided++;
      else row.truncated++;
    }
    figures.perTool.set(tool, row);
  });
  for (const turn of turns(session.messages, own)) {
    const shown = elideRepeats(turn.context, options);
    figures.contexts.turns++;
    for (const fate of shown.fates) {
      figures.contexts.bytesBefore += fate.bytes;
      figures.contexts.bytesAfter += fate.shownBytes;
    }
  }
}

/** All tools together. */
export function totals(figures: ElisionFigures): ToolFigures {
  const sum = zero();
  for (const row of figures.perTool.values()) {
    for (const key of Object.keys(sum) as (keyof ToolFigures)[]) sum[key] += row[key];
  }
  return sum;
}
