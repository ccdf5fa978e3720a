// The worker of scan-thread.ts: scans the texts of each sample it is sent with the same Scanner as the main
// thread, and answers on its own port. A sample the main thread has already begun to take (the shared counter
// `progress`) is skipped: the main thread scanned it itself.
import { type MessagePort, workerData } from 'node:worker_threads';
import { Scanner } from './redact/scanner.js';
import type { Answer, Ask } from './scan-thread.js';

const { port, progress } = workerData as { port: MessagePort; progress: Int32Array };
const scanner = new Scanner();

port.on('message', ({ seq, texts }: Ask) => {
  if (Atomics.load(progress, 0) >= seq) return;
  const found = texts.map((text) => {
    const findings = scanner.find(text);
    return findings.length > 0 ? findings : null;
  });
  port.postMessage({ seq, found } satisfies Answer);
});
