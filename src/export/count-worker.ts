// The worker of count-thread.ts: counts each batch of texts it is sent, in order, with o200k and the memo of
// tokenizer.ts, and sends the counts back. The ranks are loaded at once, while the export's first rows are being
// made, so the first batch does not wait for them.
import { parentPort } from 'node:worker_threads';
import { loadO200k, o200k, remembering } from './tokenizer.js';

loadO200k();
const count = remembering(o200k.count);

parentPort?.on('message', (texts: string[]) => {
  const counts = new Int32Array(texts.length);
  for (let i = 0; i < texts.length; i++) counts[i] = count(texts[i] as string);
  parentPort?.postMessage(counts, [counts.buffer]);
});
