// The loopback server the opencode plugin asks for each tool result. It answers from the recording (a
// ShortCircuit) and from nothing else: it has no way to run a command or touch a file, so whatever the model
// asks for, the answer is either recorded text or an error naming the miss. It also keeps what was asked, for
// tests and for the run's figures. It answers only requests carrying the run's secret (loopback.ts), so no
// other process can read a recorded result or take one meant for the agent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { outputText, type ToolResult } from '../../model/session.js';
import type { Answer } from '../../replay/shortcircuit.js';
import { readBody, sendJson, serveLoopback } from '../common/loopback.js';

/** What the plugin POSTs for one tool call. */
export interface AnswerRequest {
  tool: string;
  args: unknown;
  callID: string | null;
  sessionID: string | null;
  messageID?: string | null;
  agent?: string | null;
}

/** What the plugin returns to opencode; `isError` makes the plugin throw `output`, an error result. */
export interface AnswerReply {
  title: string;
  output: string;
  metadata: Record<string, unknown>;
  isError: boolean;
}

export interface Asked {
  request: AnswerRequest;
  reply: AnswerReply;
  answer: Answer;
  /** Time spent answering, in ms. */
  ms: number;
}

/** `ShortCircuit` fits; tests may pass anything with the same `answer`. */
export interface AnswerSource {
  /** `call` is opencode's id of the call (what the model sees), when the plugin sent one. */
  answer(name: string, input: unknown, call?: { id: string | null }): Answer;
}

export interface AnswerServerOptions {
  /** The run's secret: every request must carry it as `Authorization: Bearer <secret>`. */
  secret: string;
  /** Listen on this Unix socket (inside the private tree) instead of a TCP port. */
  socket?: string;
  /** The recorded title and metadata of a result, where the source keeps them; default: none. */
  details?: (result: ToolResult) => { title?: string; metadata?: Record<string, unknown> };
  /** Largest request body accepted, in bytes (default 16 MiB). */
  maxBodyBytes?: number;
}

export interface AnswerServer {
  /** The URL the plugin POSTs to (its env var: `answersUrlEnv`); over the socket, its host is a fixed name. */
  url: string;
  /** The TCP port, when not on a socket. */
  port?: number;
  /** The Unix socket the plugin connects to (its env var: `answersSocketEnv`), when on one. */
  socket?: string;
  /** Requests the gate refused (wrong host, no secret, another route): none of them was answered. */
  refused: { host: number; secret: number; route: number };
  /** Every call asked, in order. */
  asked: Asked[];
  /**
   * The plugin's word that it is loaded (its `POST /live` at start-up, with the PID of the opencode process it
   * runs in): resolves with that PID, or undefined when none came within `timeoutMs`.
   */
  live(timeoutMs: number): Promise<number | undefined>;
  close(): Promise<void>;
}

/** The error result a call that is not in the recording gets: it names the call and the nearest recorded ones. */
export function missReply(request: AnswerRequest, answer: Extract<Answer, { kind: 'miss' }>): AnswerReply {
  const near = answer.nearest.map(
    (call) => `${call.name} ${JSON.stringify(call.input)} (differs: ${call.differs.join(', ') || 'nothing'})`,
  );
  const output = [
    `replay-history: ${request.tool} ${JSON.stringify(request.args)} is not in the recording; nothing was run.`,
    ...(near.length > 0 ? ['Nearest recorded calls:', ...near.map((line) => `- ${line}`)] : []),
  ].join('\n');
  return { title: '', output, metadata: {}, isError: true };
}

export function replyFor(
  request: AnswerRequest,
  answer: Answer,
  options: Pick<AnswerServerOptions, 'details'> = {},
): AnswerReply {
  if (answer.kind === 'miss') return missReply(request, answer);
  const details = options.details?.(answer.result) ?? {};
  return {
    title: details.title ?? '',
    output: outputText(answer.result.output),
    metadata: details.metadata ?? {},
    isError: answer.result.isError,
  };
}

/** Starts the server on its socket, or 127.0.0.1 on a free port. The caller must close() it. */
export async function startAnswerServer(
  source: AnswerSource,
  options: AnswerServerOptions,
): Promise<AnswerServer> {
  const asked: Asked[] = [];
  const limit = options.maxBodyBytes ?? 16 * 1024 * 1024;
  let announced: (pid: number) => void = () => {};
  const liveness = new Promise<number>((resolve) => {
    announced = resolve;
  });

  // Only POST /answer and POST /live reach this (the gate answers anything else).
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    if ((req.url ?? '').split('?')[0] === '/live') {
      let pid: unknown;
      try {
        pid = (JSON.parse((await readBody(req, 4096)).toString('utf8')) as { pid?: unknown }).pid;
      } catch {
        // Not JSON: refused below.
      }
      if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) {
        sendJson(res, 400, { error: 'expected {pid}' });
        return;
      }
      announced(pid);
      sendJson(res, 200, {});
      return;
    }
    const request = parseRequest((await readBody(req, limit)).toString('utf8'));
    if (!request) {
      sendJson(res, 400, { error: 'expected {tool, args, callID, sessionID}' });
      return;
    }
    const answer = source.answer(request.tool, request.args, { id: request.callID });
    const reply = replyFor(request, answer, options);
    asked.push({ request, reply, answer, ms: performance.now() - started });
    sendJson(res, 200, reply);
  };

  const served = await serveLoopback(
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        // The plugin turns any non-200 into an error result: a broken request never becomes a run.
        if (!res.headersSent) sendJson(res, 500, { error: String(error) });
        else res.end();
      });
    },
    {
      secret: options.secret,
      routes: [
        { method: 'POST', path: '/answer' },
        { method: 'POST', path: '/live' },
      ],
      ...(options.socket ? { socket: options.socket } : {}),
    },
  );
  return {
    url: `${served.origin}/answer`,
    ...(served.port !== undefined ? { port: served.port } : {}),
    ...(served.socket !== undefined ? { socket: served.socket } : {}),
    refused: served.refused,
    asked,
    live: (timeoutMs) =>
      Promise.race([
        liveness,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs).unref()),
      ]),
    close: () => served.close(),
  };
}

function parseRequest(raw: string): AnswerRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  const body = value as Record<string, unknown>;
  if (typeof body.tool !== 'string') return undefined;
  const text = (field: unknown) => (typeof field === 'string' ? field : null);
  return {
    tool: body.tool,
    args: body.args ?? {},
    callID: text(body.callID),
    sessionID: text(body.sessionID),
    messageID: text(body.messageID),
    agent: text(body.agent),
  };
}
