#!/usr/bin/env node
// A zero-latency OpenAI-compatible chat-completions server for the replay benchmark, on 127.0.0.1 and a free
// port. Every POST …/chat/completions is answered as soon as its body has arrived, with one of two fixed,
// non-streamed assistant messages: a short text, or (for one request in four, chosen by the body's length so
// that the same request always gets the same answer) the same text with one tool call. The body is not
// parsed: the server should cost as little as possible, and it runs in its own process so that its CPU is not
// counted against the client's.
//
//   node bench/replay/server.mjs      → prints {"port":N,"baseURL":"http://127.0.0.1:N/v1"} on its first line
//
// GET /bench/stats returns its counters (requests, body bytes, tool-call answers, its own CPU time). It stops
// on SIGTERM or SIGINT, or when its parent closes its stdin.

import { createServer } from 'node:http';

const text = 'Done: the change is in place and the tests pass.';

function completion(withCall) {
  const message = { role: 'assistant', content: text };
  if (withCall) {
    message.tool_calls = [
      {
        id: 'call_bench_1',
        type: 'function',
        function: {
          name: 'Read',
          arguments: JSON.stringify({ file_path: '/home/user/project/src/index.ts' }),
        },
      },
    ];
  }
  return Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 1767225600,
      model: 'bench',
      choices: [{ index: 0, message, finish_reason: withCall ? 'tool_calls' : 'stop' }],
      usage: {
        prompt_tokens: 1000,
        completion_tokens: withCall ? 30 : 12,
        total_tokens: withCall ? 1030 : 1012,
      },
    }),
  );
}

const plain = completion(false);
const withCall = completion(true);
const stats = { requests: 0, bodyBytes: 0, toolCalls: 0, errors: 0 };

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

const server = createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk) => {
    bytes += chunk.length;
  });
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path.endsWith('/chat/completions')) {
      stats.requests++;
      stats.bodyBytes += bytes;
      const call = bytes % 4 === 0;
      if (call) stats.toolCalls++;
      send(res, 200, call ? withCall : plain);
    } else if (req.method === 'GET' && path === '/bench/stats') {
      const cpu = process.cpuUsage();
      send(res, 200, Buffer.from(JSON.stringify({ ...stats, cpuUserUs: cpu.user, cpuSystemUs: cpu.system })));
    } else {
      stats.errors++;
      send(
        res,
        404,
        Buffer.from(JSON.stringify({ error: { message: `no route for ${req.method} ${path}` } })),
      );
    }
  });
});

function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ port, baseURL: `http://127.0.0.1:${port}/v1` })}\n`);
});
