import { ProviderError } from './types.js';

/**
 * Turns an SDK or network error into a ProviderError. Authentication and not-found errors are fatal: with a
 * wrong key or an unknown model every turn would fail the same way, so the run stops at the first.
 */
export function providerError(error: unknown, provider: string, endpoint?: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = error as {
    status?: number;
    message?: string;
    cause?: { code?: string; message?: string; cause?: { code?: string; message?: string } };
  };
  // The SDKs' error classes keep the generic `name` 'Error': tell them apart by class.
  const kind = (error as { constructor?: { name?: string } })?.constructor?.name ?? '';
  const status = typeof e.status === 'number' ? e.status : undefined;
  // The SDKs start their message with the status ("400 context length…"): it is said once, as HTTP 400.
  const first = (e.message ?? String(error)).split('\n')[0] ?? '';
  const detail = status && first.startsWith(`${status} `) ? first.slice(`${status} `.length) : first;
  if (status === 401 || status === 403) {
    return new ProviderError(
      `${provider}: authentication failed (${status}): ${detail}; check the API key`,
      true,
      status,
    );
  }
  if (status === 404) {
    return new ProviderError(
      `${provider}: not found (404): ${detail}; check the model name and --base-url`,
      true,
      status,
    );
  }
  if (kind === 'APIUserAbortError' || kind === 'AbortError') return new ProviderError(`${provider}: aborted`);
  if (kind === 'APIConnectionTimeoutError')
    return new ProviderError(`${provider}: timed out: ${detail}`, false);
  if (kind === 'APIConnectionError') {
    // fetch wraps the socket error: APIConnectionError → TypeError('fetch failed') → Error{code}. The SDK has
    // already retried it: nothing answers there (refused, no such host, no route, a port fetch will not use),
    // so every other turn would fail alike — stop at the first instead of failing them all, one by one.
    const socket = e.cause?.cause ?? e.cause;
    const code = socket?.code;
    const why = socket?.message ?? detail;
    return new ProviderError(
      `${provider}: cannot connect${code ? ` (${code})` : ''}${endpoint ? ` to ${endpoint}` : ''}: ${why}; is the server running?`,
      true,
    );
  }
  return new ProviderError(`${provider}: ${status ? `HTTP ${status}: ` : ''}${detail}`, false, status);
}
