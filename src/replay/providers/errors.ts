import { ProviderError } from './types.js';

/**
 * Turns an SDK or network error into a ProviderError. Authentication and not-found errors are fatal: with a
 * wrong key or an unknown model every turn would fail the same way, so the run stops at the first.
 */
export function providerError(error: unknown, provider: string): ProviderError {
  if (error instanceof ProviderError) return error;
  const e = error as {
    status?: number;
    message?: string;
    cause?: { code?: string; cause?: { code?: string } };
  };
  // The SDKs' error classes keep the generic `name` 'Error': tell them apart by class.
  const kind = (error as { constructor?: { name?: string } })?.constructor?.name ?? '';
  const status = typeof e.status === 'number' ? e.status : undefined;
  const detail = (e.message ?? String(error)).split('\n')[0];
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
  // fetch wraps the socket error: APIConnectionError → TypeError('fetch failed') → Error{code}.
  const code = e.cause?.cause?.code ?? e.cause?.code;
  if (kind === 'APIConnectionError' && (code === 'ECONNREFUSED' || code === 'ENOTFOUND')) {
    // Nothing listens there: every turn would fail alike.
    return new ProviderError(
      `${provider}: cannot connect (${code}): ${detail}; is the server running?`,
      true,
    );
  }
  return new ProviderError(`${provider}: ${status ? `HTTP ${status}: ` : ''}${detail}`, false, status);
}
