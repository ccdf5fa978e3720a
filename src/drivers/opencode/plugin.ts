// The opencode plugin that makes the real agent replay a recording: every built-in tool is overridden by a
// plugin tool of the same name (opencode lets the later, custom definition win), whose `execute` asks the
// replay process for the recorded result over loopback HTTP (a Unix socket in the private tree where there is
// one: Bun's fetch takes a `unix` option), with the run's secret. Nothing in it can run a command or touch a
// file, so a run with it executes nothing even when the replay process is gone.
//
// The plugin is plain ESM JavaScript with no imports: opencode accepts a plain `{description, args, execute}`
// object as a tool (it checks those three keys; `tool()` from `@opencode-ai/plugin` is the identity), so the
// plugin needs no installed package. environment.ts still makes opencode's own dependency install a no-op.

/**
 * The built-in tools of opencode 1.18.33 (from its `ToolRegistry`). The driver overrides what opencode is found
 * to offer (probe.ts) and, on this version, these too. opencode filters some
 * by id — `edit`/`write` vs `apply_patch` by model, `websearch` by provider, `question` by permission — and the
 * same filter drops our override of that id, so overriding them all adds no tool. `lsp` and `plan_exit` exist
 * only behind experimental flags and are NOT listed: an override of an absent built-in would be offered as an
 * extra tool; if a flag brings them in, the probe finds them offered and they are overridden too (and a tool
 * offered that is in neither list still fails the run in the definition hook).
 */
export const builtinTools = [
  'question',
  'bash',
  'read',
  'glob',
  'grep',
  'edit',
  'write',
  'task',
  'webfetch',
  'todowrite',
  'websearch',
  'skill',
  'apply_patch',
] as const;

/**
 * Built-ins allowed to run natively. `invalid` is what opencode calls when the model names an unknown tool or
 * sends bad arguments: it only formats an error message, and running it keeps that message byte-identical.
 */
export const passthroughTools = ['invalid'] as const;

/** The env var holding the answer server's URL (e.g. http://127.0.0.1:41234/answer). */
export const answersUrlEnv = 'REPLAY_HISTORY_ANSWERS_URL';

/**
 * The env var holding the answer server's Unix socket, when it listens on one: the plugin's fetch connects
 * there (Bun's `unix` option) and the URL only names the path and the Host.
 */
export const answersSocketEnv = 'REPLAY_HISTORY_ANSWERS_SOCKET';

/** The provider id of our model in opencode's config (`replay/<model>`). */
export const providerId = 'replay';

/**
 * The env var holding the recording proxy's Unix socket, when it listens on one. opencode reaches a provider
 * only by URL, but it asks a plugin's `auth.loader` for the provider's options when a key for that provider is
 * stored (auth.json in the private data dir, written by environment.ts), and takes a `fetch` from it: ours
 * connects to the socket. The provider's baseURL then names port 0, which nothing can listen on, so a model
 * call that bypassed the plugin would fail to connect rather than go anywhere else.
 */
export const modelSocketEnv = 'REPLAY_HISTORY_MODEL_SOCKET';

/**
 * The env var holding the replay process's PID. When that process is gone (killed), the plugin stops opencode:
 * the answers could not come anyway, and an agent left running on its own is not what anyone asked for.
 */
export const parentPidEnv = 'REPLAY_HISTORY_PARENT_PID';

/** The exit code opencode is stopped with when the replay process is gone. */
export const orphanExitCode = 70;

/** The file name under the config dir's `plugins/` (opencode globs `{plugin,plugins}/*.{ts,js}`). */
export const pluginFileName = 'replay-history-overrides.js';

/** Starts every override's own description, so `tool.definition` can tell ours from the built-in. */
export const overrideMarker = 'replay-history override of ';

export interface PluginOptions {
  /**
   * The run's secret, sent to the answer server as `Authorization: Bearer <secret>`. It is written into the
   * plugin file (0600, in the private tree) rather than the environment, which every process opencode starts
   * would inherit.
   */
  secret?: string;
  /** Tool ids to override; default: `builtinTools`. */
  tools?: readonly string[];
  /** How long one answer may take before the call gets an error result (ms); default 30 s. */
  timeoutMs?: number;
  /** How long an override's definition waits for the built-in's to copy from (ms); default 5 s. */
  definitionWaitMs?: number;
  /**
   * Say the plugin is loaded at start-up (`POST /live` to the answer server, with opencode's PID): the driver
   * prompts nothing before it has heard it. Default: off.
   */
  announce?: boolean;
}

/** The plugin's source text, to be written as `<config dir>/plugins/<pluginFileName>`. */
export function pluginSource(options: PluginOptions = {}): string {
  const settings = {
    tools: [...(options.tools ?? builtinTools)],
    passthrough: [...passthroughTools],
    urlEnv: answersUrlEnv,
    socketEnv: answersSocketEnv,
    provider: providerId,
    modelSocketEnv,
    secret: options.secret ?? '',
    parentEnv: parentPidEnv,
    orphanExitCode,
    marker: overrideMarker,
    timeoutMs: options.timeoutMs ?? 30_000,
    definitionWaitMs: options.definitionWaitMs ?? 5_000,
    announce: options.announce ?? false,
  };
  return `// Written by replay-history: answers every tool call from a recording. Do not edit.
const settings = ${JSON.stringify(settings, null, 2)};
${pluginBody}`;
}

// Kept as a string, not a function's toString(): what opencode loads is exactly what is reviewed here.
const pluginBody = String.raw`
const overridden = new Set(settings.tools);
const passthrough = new Set(settings.passthrough);

/** Asks the replay process; any failure becomes a thrown error, which opencode gives the model as an error result. */
async function ask(tool, args, ctx) {
  const url = process.env[settings.urlEnv];
  if (!url) throw new Error('replay-history: no answer server (' + settings.urlEnv + ' is unset); nothing was run');
  const socket = process.env[settings.socketEnv];
  let response;
  try {
    response = await fetch(url, {
      method: 'POST',
      // Bun's fetch connects to a Unix socket given as \`unix\`; the URL then only gives the path and the Host.
      ...(socket ? { unix: socket } : {}),
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + settings.secret },
      body: JSON.stringify({
        tool,
        args,
        callID: ctx?.callID ?? null,
        sessionID: ctx?.sessionID ?? null,
        messageID: ctx?.messageID ?? null,
        agent: ctx?.agent ?? null,
      }),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
  } catch (error) {
    throw new Error('replay-history: answer server unreachable (' + String(error?.message ?? error) + '); nothing was run');
  }
  if (response.status !== 200) {
    throw new Error('replay-history: answer server said HTTP ' + response.status + '; nothing was run');
  }
  let reply;
  try {
    reply = await response.json();
  } catch {
    throw new Error('replay-history: answer server sent no JSON; nothing was run');
  }
  if (!reply || typeof reply.output !== 'string') {
    throw new Error('replay-history: answer server sent no output; nothing was run');
  }
  // A recorded error (or a miss) is thrown, so the model sees an error result as it did in the recording.
  if (reply.isError) throw new Error(reply.output);
  return { title: typeof reply.title === 'string' ? reply.title : '', output: reply.output, metadata: reply.metadata ?? {} };
}

function override(id) {
  return {
    description: settings.marker + id,
    args: {},
    execute: (args, ctx) => ask(id, args, ctx),
  };
}

/** Stops opencode once the replay process is gone (polled: Linux has no portable parent-death signal here). */
function watchParent() {
  const parent = Number(process.env[settings.parentEnv]);
  if (!(parent > 0)) return;
  const timer = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch (error) {
      if (error?.code !== 'ESRCH') return;
      process.stderr.write('replay-history: the replay process (' + parent + ') is gone; stopping opencode\n');
      process.exit(settings.orphanExitCode);
    }
  }, 250);
  timer.unref?.();
}

/**
 * Tells the answer server this plugin is loaded, with the PID of the opencode it runs in: the driver sends no
 * prompt before it has heard this. A failure is only logged: the driver then refuses to replay.
 */
function announce() {
  const url = process.env[settings.urlEnv];
  if (!settings.announce || !url) return;
  const socket = process.env[settings.socketEnv];
  fetch(url.replace(/\/answer$/, '/live'), {
    method: 'POST',
    ...(socket ? { unix: socket } : {}),
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + settings.secret },
    body: JSON.stringify({ pid: process.pid }),
    signal: AbortSignal.timeout(settings.timeoutMs),
  }).catch((error) => {
    process.stderr.write('replay-history: could not say the plugin is loaded (' + String(error?.message ?? error) + ')\n');
  });
}

export const ReplayHistoryOverrides = async () => {
  watchParent();
  announce();
  // The last definition seen per built-in, and who waits for one that has not arrived yet.
  const builtins = new Map();
  const waiting = new Map();
  const arrived = (id) =>
    builtins.has(id)
      ? Promise.resolve(builtins.get(id))
      : new Promise((resolve) => {
          // Cleared on arrival, so no timer outlives the wait and holds the process open.
          const timer = setTimeout(() => resolve(builtins.get(id)), settings.definitionWaitMs);
          const list = waiting.get(id) ?? [];
          list.push((value) => {
            clearTimeout(timer);
            resolve(value);
          });
          waiting.set(id, list);
        });
  const modelSocket = process.env[settings.modelSocketEnv];
  return {
    tool: Object.fromEntries(settings.tools.map((id) => [id, override(id)])),
    // The provider's fetch, when the recording proxy is on a Unix socket: every model call goes there.
    ...(modelSocket
      ? {
          auth: {
            provider: settings.provider,
            loader: async () => ({
              fetch: (input, init) => fetch(input, { ...init, unix: modelSocket }),
            }),
            methods: [{ type: 'api', label: 'replay-history' }],
          },
        }
      : {}),
    // Fires for each tool offered to the model, the built-in first and then our override of the same name.
    'tool.definition': async ({ toolID }, output) => {
      const ours = typeof output.description === 'string' && output.description === settings.marker + toolID;
      if (!ours) {
        if (!overridden.has(toolID) && !passthrough.has(toolID)) {
          // A tool this plugin does not know (a newer opencode's built-in, a custom tool): fail the run.
          throw new Error('replay-history: tool "' + toolID + '" is offered to the model but not overridden');
        }
        // Keep the very objects (parameters are Effect Schema, not zod): the model sees the built-in's bytes.
        builtins.set(toolID, { description: output.description, parameters: output.parameters, jsonSchema: output.jsonSchema });
        for (const resolve of waiting.get(toolID) ?? []) resolve(builtins.get(toolID));
        waiting.delete(toolID);
        return;
      }
      const builtin = await arrived(toolID);
      if (!builtin) throw new Error('replay-history: no built-in "' + toolID + '" to copy the definition from');
      output.description = builtin.description;
      output.parameters = builtin.parameters;
      output.jsonSchema = builtin.jsonSchema;
    },
    // Fail closed: MCP tools and anything else not answered from the recording never run.
    'tool.execute.before': async ({ tool }) => {
      if (overridden.has(tool) || passthrough.has(tool)) return;
      throw new Error('replay-history: tool "' + tool + '" is not answered from the recording; it was not run');
    },
  };
};
`;
