// What every driver's proxy does with a live model (`--model openai:…`, `anthropic:…`, `responses:…`,
// `gemini:…`): the request sent upstream under the upstream's own key, an endpoint that cannot be reached or
// that refuses said the same way (the key never in what is said), and the answer passed on to the agent as it
// comes, with backpressure, its last piece held back until the proxy has decided every call in it. The wire —
// its URL, headers, error body, and what its assembler makes of each piece — is the caller's.
import type { ServerResponse } from 'node:http';
import { redact } from './loopback.js';

export interface Forward {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  /** The endpoint as the user named it (said when it cannot be reached) and the key never to be said. */
  baseURL: string;
  apiKey?: string | undefined;
  /** Writes the wire's own error body (a 502 when the endpoint cannot be reached). */
  fail: (status: number, message: string) => void;
  /** Records what went wrong on the exchange. */
  report: (error: string) => void;
}

/**
 * Sends the request upstream. An answer that is not OK is passed through to the agent as it came (status, type,
 * text with the key taken out) and reported; an endpoint that cannot be reached is a 502 naming it. Either way
 * the response is finished and undefined returned. Otherwise the 200 head is written with the upstream's content
 * type, and the answer's body and type returned for `relay`.
 */
export async function forward(
  res: ServerResponse,
  request: Forward,
): Promise<{ body: ReadableStream<Uint8Array>; type: string } | undefined> {
  let answer: Response;
  try {
    answer = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    const why = redact(`the model endpoint ${request.baseURL}: ${(error as Error).message}`, request.apiKey);
    request.report(why);
    request.fail(502, `replay-history: ${why}`);
    return undefined;
  }
  if (!answer.ok || !answer.body) {
    const text = redact(await answer.text().catch(() => ''), request.apiKey);
    request.report(`HTTP ${answer.status}: ${text.slice(0, 500)}`);
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(text);
    return undefined;
  }
  const type = answer.headers.get('content-type') ?? 'application/json';
  res.writeHead(200, { 'content-type': type });
  return { body: answer.body, type };
}

/**
 * Passes an answer on as it comes, each piece as `take` makes it (the bytes themselves, or the bytes rewritten;
 * an empty piece is nothing to pass yet), waiting for the agent to take each (backpressure) — except the last
 * piece, which is returned unwritten: the caller ends the response with it once every call in the answer has its
 * recorded result, so the agent cannot ask again before the proxy knows what to answer.
 */
export async function relay<Piece extends string | Uint8Array>(
  res: ServerResponse,
  body: ReadableStream<Uint8Array>,
  take: (chunk: Buffer) => Piece,
): Promise<Piece | undefined> {
  const reader = body.getReader();
  let held: Piece | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return held;
    const piece = take(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    if (piece.length === 0) continue;
    if (held !== undefined && !res.write(held)) await new Promise((resolve) => res.once('drain', resolve));
    held = piece;
  }
}
