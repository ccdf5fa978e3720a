// `--model recorded` for the opencode driver: a loopback OpenAI-compatible endpoint that answers opencode's
// agent steps with the recorded model turns the driver hands it (text, reasoning, tool calls, usage), streamed as the
// real APIs stream, and its side calls (title, compaction summary) with what the session recorded. Replaying
// a session this way runs the real agent through its own recording: every call it makes must be answered by
// the short-circuit, which is the check, and it needs no model or key. Only the recording proxy talks to it,
// over a Unix socket in the private tree where it can, always with the run's secret as its API key.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatMessage } from '../../replay/chat.js';
import { readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { writeChatCompletion, writeChatStream } from '../wire/openai-chat.js';
import { classifyRequest } from './proxy.js';

type Assistant = Extract<ChatMessage, { role: 'assistant' }>;

export interface RecordedTurn {
  message: Assistant;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

export interface RecordedModelOptions {
  /** The run's secret: every request must carry it as its API key (`Authorization: Bearer <secret>`). */
  secret: string;
  /** Listen on this Unix socket instead of a TCP port (the proxy connects with `upstreamSocket`). */
  socket?: string;
  /** The recorded turn for the next agent step, or undefined when the recording has none left. */
  next: () => RecordedTurn | undefined;
  /** The answer to opencode's title request. */
  title?: string;
  /** The answers to compaction requests, in order: the session's recorded summaries (the last one repeats). */
  summaries?: readonly string[];
  /** The model id answers carry. */
  model?: string;
}

export interface RecordedModel {
  /** Base URL including /v1 (over the socket, its host is a fixed name). */
  url: string;
  /** The Unix socket it listens on, when on one. */
  socket?: string;
  /** Requests the gate refused (wrong host, no secret, another route): none was answered. */
  refused: { host: number; secret: number; route: number };
  /** Agent steps answered so far. */
  answered(): number;
  /** Step requests refused because every recorded turn had been given. */
  exhausted(): number;
  close(): Promise<void>;
}

/** What a refused request says, so the driver can tell "the recording ended" from a model failure. */
export const exhaustedMessage = 'replay-history: the recording holds no more model turns';

export async function startRecordedModel(options: RecordedModelOptions): Promise<RecordedModel> {
  let answered = 0;
  let refused = 0;
  let summarized = 0;
  const model = options.model ?? 'recorded';

  // Only POST /v1/chat/completions reaches this (the gate answers anything else).
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = (await readBody(req)).toString('utf8');
    let request: { messages?: ChatMessage[]; tools?: unknown[]; stream?: boolean };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      fail(res, 400, 'the request is not JSON');
      return;
    }
    const kind = classifyRequest({
      messages: request.messages ?? [],
      tools: (request.tools ?? []) as never,
    });
    let answer: RecordedTurn;
    if (kind === 'title') answer = { message: { role: 'assistant', content: options.title ?? 'Replay' } };
    else if (kind === 'summary') {
      const summaries = options.summaries ?? [];
      const text = summaries[Math.min(summarized++, summaries.length - 1)] ?? '(no summary was recorded)';
      answer = { message: { role: 'assistant', content: text } };
    } else {
      const turn = options.next();
      if (!turn) {
        refused++;
        fail(res, 400, exhaustedMessage);
        return;
      }
      answered++;
      answer = turn;
    }
    if (request.stream) writeChatStream(res, answer.message, model, answer.usage);
    else writeChatCompletion(res, answer.message, model, answer.usage);
  };

  const served = await serveLoopback(
    (req, res) => {
      handle(req, res).catch((error: unknown) => fail(res, 500, String(error)));
    },
    {
      secret: options.secret,
      routes: [{ method: 'POST', path: '/v1/chat/completions' }],
      ...(options.socket ? { socket: options.socket } : {}),
    },
  );
  return {
    url: `${served.origin}/v1`,
    ...(served.socket !== undefined ? { socket: served.socket } : {}),
    refused: served.refused,
    answered: () => answered,
    exhausted: () => refused,
    close: () => served.close(),
  };
}

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { error: { message, type: 'invalid_request_error' } });
}
