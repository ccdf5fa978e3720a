import type { HttpOptions } from './openai.js';
import { recorded } from './recorded.js';
import type { Provider } from './types.js';

export interface ProviderSettings {
  /** `recorded`, `openai:MODEL`, `responses:MODEL`, `ollama:MODEL`, `anthropic:MODEL` or `gemini:MODEL`. */
  spec: string;
  baseURL?: string;
  timeoutMs: number;
  maxRetries: number;
  stream: boolean;
  maxTokens?: number;
  env?: NodeJS.ProcessEnv;
}

export class ProviderSpecError extends Error {}

/** `provider:model` split; throws when the model is not named. `recorded` has no model. */
export function parseSpec(spec: string): { kind: string; model: string } {
  if (spec === 'recorded') return { kind: 'recorded', model: '' };
  const colon = spec.indexOf(':');
  const kind = colon === -1 ? spec : spec.slice(0, colon);
  const model = colon === -1 ? '' : spec.slice(colon + 1);
  if (!model) {
    throw new ProviderSpecError(
      `--model ${spec}: name the model, e.g. openai:gpt-4o-mini or ollama:qwen2.5-coder:7b`,
    );
  }
  return { kind, model };
}

/**
 * The provider a `--model` value names, with its endpoint and key from the options or the environment. The
 * SDKs are loaded only when asked for: they take a third of a second to load, which every other command
 * (ingest, sessions…) would otherwise pay.
 */
export async function providerFor(settings: ProviderSettings): Promise<Provider> {
  const env = settings.env ?? process.env;
  if (settings.spec === 'recorded') return recorded;
  const { kind, model } = parseSpec(settings.spec);
  const common = (baseURL: string, apiKey: string | undefined): HttpOptions => ({
    model,
    baseURL,
    ...(apiKey ? { apiKey } : {}),
    timeoutMs: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    stream: settings.stream,
    ...(settings.maxTokens ? { maxTokens: settings.maxTokens } : {}),
    name: settings.spec,
  });
  switch (kind) {
    case 'openai':
      return (await import('./openai.js')).openaiProvider(
        common(settings.baseURL ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', env.OPENAI_API_KEY),
      );
    case 'ollama':
      return (await import('./openai.js')).openaiProvider(
        common(settings.baseURL ?? 'http://127.0.0.1:11434/v1', env.OPENAI_API_KEY),
      );
    case 'responses':
      return (await import('./responses.js')).responsesProvider(
        common(settings.baseURL ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1', env.OPENAI_API_KEY),
      );
    case 'anthropic':
      return (await import('./anthropic.js')).anthropicProvider(
        common(
          settings.baseURL ?? env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com',
          env.ANTHROPIC_API_KEY,
        ),
      );
    case 'gemini':
      return (await import('./gemini.js')).geminiProvider(
        common(
          settings.baseURL ?? env.GOOGLE_GEMINI_BASE_URL ?? 'https://generativelanguage.googleapis.com',
          env.GEMINI_API_KEY ?? env.GOOGLE_API_KEY,
        ),
      );
    default:
      throw new ProviderSpecError(
        `--model ${settings.spec}: unknown provider '${kind}' (use recorded, openai, responses, ollama, anthropic or gemini)`,
      );
  }
}
