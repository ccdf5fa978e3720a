// Proof that the deny hook is live, before any recorded session is replayed through this Qwen. Qwen runs the tool
// whenever a hook fails (exit 1, a signal, a hook it cannot start, exit 2 without a reason), and a setting can
// turn every hook off, so nothing is taken on trust: a run of this binary with the replay's own settings, env and
// flags, in a scratch workspace, against a loopback model of ours that asks for one harmless command (`touch` of
// a marker in that workspace). The hook is live when Qwen sends the call's `tool` message back with exactly our
// reason and the marker was not made; anything else and the replay refuses. The answer is cached per binary
// (path, size, mtime, version) and settings digest: the probe costs one Qwen start-up (~3 s).
import { createHash } from 'node:crypto';
import {
  HookNotLive,
  type Probed,
  type ProbeOptions,
  type ProbeWire,
  proveLineageHookLive,
} from '../common/headless-probe.js';
import { sendJson } from '../common/loopback.js';
import { writeChatStream } from '../wire/openai-chat.js';
import { denyReason, hookScript, prepareQwenEnvironment, runArgs, settings } from './environment.js';
import { contentText, kindOf, type QwenRequest } from './proxy.js';

export { HookNotLive, type Probed, type ProbeOptions };

/** What the probe proved depends on: the settings, hook and flags every run gets (their text, as written). */
export function settingsDigest(): string {
  return createHash('sha256')
    .update(JSON.stringify(settings({ hook: '@HOOK@' })))
    .update('\0')
    .update(hookScript())
    .update('\0')
    .update(runArgs.join('\0'))
    .digest('hex');
}

const callId = 'call_replay_history_probe';

/** Qwen's side of the probe: the chat-completions wire, its deny reason under the call's tool_call_id. */
const wire: ProbeWire<QwenRequest> = {
  command: 'qwen',
  cacheName: 'qwen-probe.json',
  get digest() {
    return settingsDigest();
  },
  callId,
  expected: denyReason,
  loopback: { routes: [{ method: 'POST', path: '/v1/chat/completions' }] },
  parse(raw) {
    try {
      const body = JSON.parse(raw) as QwenRequest;
      return body && Array.isArray(body.messages) ? body : undefined;
    } catch {
      return undefined;
    }
  },
  badRequest: (res) =>
    sendJson(res, 400, { error: { message: 'replay-history: probe', type: 'invalid_request_error' } }),
  resultOf(body) {
    const answered = body.messages.find(
      (message) => message.role === 'tool' && message.tool_call_id === callId,
    );
    return answered ? contentText(answered.content) : undefined;
  },
  asks: (body) => kindOf(body) === 'step' && !body.messages.some((message) => message.role === 'assistant'),
  answer: (res, message, body) =>
    writeChatStream(res, message, body.model ?? 'probe', { prompt_tokens: 1, completion_tokens: 1 }),
  environment: (options) => prepareQwenEnvironment({ ...options, model: 'qwen3-coder-plus' }),
  settings: (hook) => settings({ hook }),
};

/** Proves the hook live for this binary (or finds it proved in the cache); throws HookNotLive when it is not. */
export function proveHookLive(options: ProbeOptions): Promise<Probed> {
  return proveLineageHookLive(wire, options);
}
