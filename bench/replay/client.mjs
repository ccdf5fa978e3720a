#!/usr/bin/env node
// The baseline of the replay benchmark: a bare HTTP client that sends the very requests a replay sent, to the
// same server, at the same concurrency, with plain fetch and nothing else.
//
//   node bench/replay/client.mjs --pairs pairs.jsonl --base-url http://127.0.0.1:N/v1 --model bench --concurrency 4
//
// Each line of the pairs file holds what was sent for one turn (`messages`, `tools`); the body is rebuilt as
// the OpenAI SDK builds it ({model, messages, tools if any, stream: false}), so the server gets the same
// bytes. Reading the file and building the bodies happens first and is reported separately (setup); then
// `concurrency` workers take the next body in turn, JSON.stringify it, POST it and parse the JSON answer,
// until none is left (always `concurrency` requests in flight). Prints one JSON line with the figures.

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string' },
    'base-url': { type: 'string' },
    model: { type: 'string', default: 'bench' },
    concurrency: { type: 'string', default: '4' },
  },
});
if (!values.pairs || !values['base-url']) {
  process.stderr.write(
    'usage: node bench/replay/client.mjs --pairs FILE --base-url URL [--model bench] [--concurrency 4]\n',
  );
  process.exit(2);
}
const concurrency = Math.max(1, Number(values.concurrency));
const url = `${values['base-url'].replace(/\/$/, '')}/chat/completions`;

const setupCpu = process.cpuUsage();
const setupStarted = performance.now();
const bodies = [];
// Line by line: the pairs of a large store are more than one string can hold (722 MB for 6,413 turns).
for await (const line of createInterface({ input: createReadStream(values.pairs), crlfDelay: Infinity })) {
  if (line === '') continue;
  const pair = JSON.parse(line);
  bodies.push({
    model: values.model,
    messages: pair.messages,
    ...(pair.tools.length > 0 ? { tools: pair.tools } : {}),
    stream: false,
  });
}
const setupMs = performance.now() - setupStarted;
const setupCpuUs = process.cpuUsage(setupCpu);

let next = 0;
let toolCalls = 0;
let failed = 0;
async function worker() {
  while (next < bodies.length) {
    const body = bodies[next++];
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const reply = await response.json();
    if (!response.ok) failed++;
    else if (reply.choices?.[0]?.message?.tool_calls?.length) toolCalls++;
  }
}

const loopCpu = process.cpuUsage();
const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const loopMs = performance.now() - started;
const loopCpuUs = process.cpuUsage(loopCpu);

process.stdout.write(
  `${JSON.stringify({
    requests: bodies.length,
    failed,
    toolCalls,
    setupMs,
    setupCpuUs: setupCpuUs.user + setupCpuUs.system,
    loopMs,
    loopCpuUs: loopCpuUs.user + loopCpuUs.system,
  })}\n`,
);
