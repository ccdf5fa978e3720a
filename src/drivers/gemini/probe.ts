// Proof that the deny hook is live, before any recorded session is replayed through this Gemini CLI. A hook can
// be switched off by a setting, a hook that fails may let the tool run, and another version may drop hooks: nothing
// is taken on trust. A run of this binary with the replay's own settings, env and flags, in a scratch workspace,
// against a loopback model of ours that asks for one harmless command (`touch` of a marker in that workspace).
// The hook is live when the CLI sends the call's `functionResponse` back, under our id, saying it was blocked
// with exactly our reason, and the marker was not made; anything else and the replay refuses. The answer is
// cached per binary (path, size, mtime, version) and settings digest: the probe costs one start-up (~5 s).
import { createHash } from 'node:crypto';
import {
  HookNotLive,
  type Probed,
  type ProbeOptions,
  type ProbeWire,
  proveLineageHookLive,
} from '../common/headless-probe.js';
import { sendJson } from '../common/loopback.js';
import { type GeminiRequest, responseText, writeGeminiStream } from '../wire/gemini.js';
import { blockedText, hookScript, prepareGeminiEnvironment, runArgs, settings } from './environment.js';
import { kindOf } from './proxy.js';

export { HookNotLive, type Probed, type ProbeOptions };

const probeModel = 'gemini-2.5-pro';

/** What the probe proved depends on: the settings, hook and flags every run gets (their text, as written). */
export function settingsDigest(): string {
  return createHash('sha256')
    .update(JSON.stringify(settings({ hook: '@HOOK@' })))
    .update('\0')
    .update(hookScript())
    .update('\0')
    .update(runArgs('@MODEL@').join('\0'))
    .digest('hex');
}

const callId = 'rh_probe_1';

/** Gemini CLI's side of the probe: the Gemini API wire, "Tool execution blocked: <reason>" under our call id. */
const wire: ProbeWire<GeminiRequest> = {
  command: 'gemini',
  cacheName: 'gemini-probe.json',
  get digest() {
    return settingsDigest();
  },
  callId,
  expected: blockedText,
  loopback: {
    credential: { header: 'x-goog-api-key' },
    routes: [{ method: 'POST', path: '/v1beta/models/', prefix: true }],
  },
  parse(raw) {
    try {
      const body = JSON.parse(raw) as GeminiRequest;
      return body && Array.isArray(body.contents) ? body : undefined;
    } catch {
      return undefined;
    }
  },
  badRequest: (res) => sendJson(res, 400, { error: { code: 400, message: 'replay-history: probe' } }),
  resultOf(body) {
    for (const content of body.contents)
      for (const part of content.parts ?? [])
        if (part.functionResponse?.id === callId) return responseText(part.functionResponse.response);
    return undefined;
  },
  asks: (body) => kindOf(body) === 'step' && !body.contents.some((content) => content.role === 'model'),
  answer: (res, message) =>
    writeGeminiStream(res, message, probeModel, { prompt_tokens: 1, completion_tokens: 1 }),
  environment: (options) => prepareGeminiEnvironment({ ...options, model: probeModel }),
  settings: (hook) => settings({ hook }),
};

/** Proves the hook live for this binary (or finds it proved in the cache); throws HookNotLive when it is not. */
export function proveHookLive(options: ProbeOptions): Promise<Probed> {
  return proveLineageHookLive(wire, options);
}
