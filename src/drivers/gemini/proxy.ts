// The proxy between a replayed Gemini CLI and its model, on the Gemini API wire. The Gemini API names no calls,
// so every function call the model makes leaves here with an id of ours (`rh_<n>`; Gemini CLI keeps a call's id
// when it has one), and each call gets its answer (`answer`) before the answer's last event is passed on. The
// hook (environment.ts) denied the call, so Gemini CLI's next request carries a `functionResponse` saying it was
// blocked, under that id; the proxy puts the recorded result in its place — by id, never by its text, on every
// request (the whole history is sent each time, a resumed session's holds the deny results of the runs before,
// each one twice: the CLI's resume copies them) — then sends the request on: to the recorded turns (`recorded`,
// answered here) or to a Gemini API endpoint. Each exchange is reported (`onExchange`).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  Answer,
  ExchangeKind,
  HeadlessCall,
  HeadlessExchange,
  HeadlessUpstream,
} from '../common/headless.js';
import { readBody, sendJson, serveLoopback } from '../common/loopback.js';
import { forward, relay } from '../common/upstream.js';
import {
  type GeminiAssembled,
  GeminiAssembler,
  type GeminiRequest,
  type GeminiUsage,
  substituteResults,
  systemText,
  writeGeminiResponse,
  writeGeminiStream,
} from '../wire/gemini.js';

export interface GeminiExchange extends HeadlessExchange {
  /** The request as it went upstream (results substituted). */
  request: GeminiRequest;
  /** The model the CLI asked for (in the path). */
  model: string;
  usage?: GeminiUsage | null;
}

export interface GeminiProxyOptions {
  secret: string;
  upstream: HeadlessUpstream<GeminiRequest>;
  answer: (call: HeadlessCall) => Answer;
  refuse?: (kind: ExchangeKind) => string | undefined;
  onExchange?: (exchange: GeminiExchange) => void;
  timeoutMs?: number;
}

export interface GeminiProxy {
  /** The origin Gemini CLI is given (`GOOGLE_GEMINI_BASE_URL`). */
  url: string;
  /** Results put in place so far (each counted once per call). */
  substituted(): number;
  close(): Promise<void>;
}

/** The openings of Gemini CLI 0.61's side calls (seen in its requests: test/fixtures/real/gemini-cli-0.61.0). */
export const sideCallMarkers = {
  /** The system instruction of the compression summarizer (and of its self-check after it). */
  summarizer: 'You are a specialized system component responsible for distilling chat history',
  /** The last user text of the summarizer's self-check: it is answered with the summary just given. */
  check: 'Critically evaluate the <state_snapshot>',
} as const;

const modelPath = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

/** The summarizer by its system instruction, a step by its tools, anything else (the router…) a side call. */
export function kindOf(body: GeminiRequest): ExchangeKind {
  if (systemText(body).trimStart().startsWith(sideCallMarkers.summarizer)) return 'compaction';
  const offered = (body.tools ?? []).some((tool) => (tool.functionDeclarations ?? []).length > 0);
  return offered ? 'step' : 'side';
}

/** Whether a summarizer request is its self-check (its last user text). */
export function isSummaryCheck(body: GeminiRequest): boolean {
  const last = body.contents?.findLast((content) => content.role !== 'model');
  const text = (last?.parts ?? []).map((part) => part.text ?? '').join('');
  return text.trimStart().startsWith(sideCallMarkers.check);
}

/** The calls of an answer, as the hook will see them. */
export function callsOf(message: NonNullable<GeminiAssembled['message']>): HeadlessCall[] {
  return (message.tool_calls ?? []).map((call) => {
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments || '{}');
    } catch {
      input = { raw: call.function.arguments };
    }
    return { id: call.id, name: call.function.name, input };
  });
}

function geminiError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, {
    error: { code: status, message, status: status === 400 ? 'INVALID_ARGUMENT' : 'INTERNAL' },
  });
}

export async function startGeminiProxy(options: GeminiProxyOptions): Promise<GeminiProxy> {
  const answers = new Map<string, Answer>();
  const upstream = options.upstream;
  let calls = 0;
  const newId = () => `rh_${++calls}`;
  let lastSummary: NonNullable<GeminiAssembled['message']> | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const path = modelPath.exec((req.url ?? '').split('?')[0] ?? '');
    if (!path) {
      geminiError(res, 404, 'replay-history: only models/<model>:generateContent and :streamGenerateContent');
      return;
    }
    const model = decodeURIComponent(path[1] as string);
    const stream = path[2] === 'streamGenerateContent';
    let body: GeminiRequest;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8')) as GeminiRequest;
      if (!Array.isArray(body.contents)) throw new Error('no contents');
    } catch (error) {
      geminiError(res, 400, `replay-history: not a Gemini API request (${(error as Error).message})`);
      return;
    }
    const kind = kindOf(body);
    const request = substituteResults(body, answers);
    const report = (fields: Partial<GeminiExchange>): void =>
      options.onExchange?.({
        kind,
        request,
        model,
        latencyMs: Math.round(performance.now() - started),
        ...fields,
      });

    const refusal = options.refuse?.(kind);
    if (refusal) {
      report({ error: refusal, refused: true });
      geminiError(res, 400, refusal);
      return;
    }
    /** Decides each call's answer before the answer ends: the next request may come at once. */
    const settle = (message: NonNullable<GeminiAssembled['message']>): void => {
      for (const call of callsOf(message))
        if (!answers.has(call.id)) answers.set(call.id, options.answer(call));
    };

    if (upstream.kind === 'recorded') {
      // The summarizer's self-check is given the summary it is checking: the recording has one per compaction.
      const answered =
        kind === 'compaction' && isSummaryCheck(body) && lastSummary
          ? { message: lastSummary }
          : upstream.next(kind, request);
      if (!answered) {
        report({ error: 'the recording has no turn to answer with here', exhausted: true });
        geminiError(res, 400, 'replay-history: the recording has no turn to answer with here');
        return;
      }
      // Our ids on the recorded calls: the recording's are another run's.
      const message = {
        ...answered.message,
        ...(answered.message.tool_calls
          ? { tool_calls: answered.message.tool_calls.map((call) => ({ ...call, id: newId() })) }
          : {}),
      };
      if (kind === 'compaction') lastSummary = message;
      if (kind === 'step') settle(message);
      const finishReason = message.tool_calls?.length ? 'tool_calls' : 'stop';
      report({ message, usage: answered.usage ?? null, finishReason });
      if (stream) writeGeminiStream(res, message, model, answered.usage);
      else writeGeminiResponse(res, message, model, answered.usage);
      return;
    }

    const base = upstream.baseURL.replace(/\/$/, '');
    const target = `${base}/v1beta/models/${encodeURIComponent(upstream.model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
    const forwarded = await forward(res, {
      url: target,
      headers: {
        'content-type': 'application/json',
        ...(upstream.apiKey ? { 'x-goog-api-key': upstream.apiKey } : {}),
      },
      body: request,
      timeoutMs: options.timeoutMs ?? 600_000,
      baseURL: upstream.baseURL,
      apiKey: upstream.apiKey,
      fail: (status, message) => geminiError(res, status, message),
      report: (error) => report({ error }),
    });
    if (!forwarded) return;
    const assembler = new GeminiAssembler(newId);
    assembler.begin(200, forwarded.type.includes('text/event-stream'));
    // Each event passed on with our ids on its calls; the last held until every call has its recorded result.
    const held =
      ((await relay(res, forwarded.body, (chunk) => assembler.push(chunk))) ?? '') + assembler.end();
    const assembled = assembler.result();
    if (assembled.message && assembled.error === undefined) {
      if (kind === 'step') settle(assembled.message);
      report({ message: assembled.message, usage: assembled.usage, finishReason: assembled.finishReason });
    } else report({ error: assembled.error ?? 'no answer' });
    res.end(held);
  };

  const served = await serveLoopback(
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) geminiError(res, 500, `replay-history: ${(error as Error).message}`);
        else res.destroy();
      });
    },
    {
      secret: options.secret,
      credential: { header: 'x-goog-api-key' },
      routes: [{ method: 'POST', path: '/v1beta/models/', prefix: true }],
    },
  );
  return { url: served.origin, substituted: () => answers.size, close: () => served.close() };
}
