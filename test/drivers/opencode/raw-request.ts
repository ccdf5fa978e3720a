// One HTTP request with every header as given (fetch will not send a foreign Host), to a TCP port on
// 127.0.0.1 or to a Unix socket: how the tests play a stranger knocking on a driver's loopback servers.
import { request } from 'node:http';

export interface RawRequest {
  /** A TCP port on 127.0.0.1, or a Unix socket's path. */
  to: number | string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Give up after this long without an answer (a refusal comes at once; a request let through may hang). */
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function rawRequest(options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const where =
      typeof options.to === 'number' ? { host: '127.0.0.1', port: options.to } : { socketPath: options.to };
    const req = request(
      {
        ...where,
        method: options.method ?? 'POST',
        path: options.path ?? '/',
        headers: {
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.timeoutMs !== undefined) {
      req.setTimeout(options.timeoutMs, () =>
        req.destroy(new Error(`no answer within ${options.timeoutMs} ms: the request was let through`)),
      );
    }
    req.end(options.body);
  });
}

/** The Host a client of `to` sends: 127.0.0.1:PORT, or the fixed name used over a socket. */
export function hostOf(to: number | string): string {
  return typeof to === 'number' ? `127.0.0.1:${to}` : 'localhost';
}
