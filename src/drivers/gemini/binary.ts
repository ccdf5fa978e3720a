// Finding the `gemini` binary: `--gemini-bin`, else `gemini` on PATH (an `npm i -g @google/gemini-cli` puts its
// entry script there), else this project's own node_modules (the pinned devDependency the tests use:
// `@google/gemini-cli/bundle/gemini.js`, a Node script). It is never a dependency of replay-history. Another
// version than the tested one runs, with a warning.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executable, type FoundBinary, findBinary } from '../common/binary.js';

const require = createRequire(import.meta.url);

export class GeminiNotFound extends Error {}

/** The pinned package's entry script, where it is installed. */
function packaged(): string | undefined {
  try {
    const root = dirname(require.resolve('@google/gemini-cli/package.json'));
    const path = join(root, 'bundle', 'gemini.js');
    return executable(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The binary to run, with its version. Throws GeminiNotFound saying what was looked for. */
export function findGemini(option?: string, env: NodeJS.ProcessEnv = process.env): FoundBinary {
  // Its `--version` relaunches Node unless told not to: twice the start-up for one line.
  return findBinary({
    ...(option ? { option } : {}),
    optionName: '--gemini-bin',
    command: 'gemini',
    packaged,
    env: { ...env, GEMINI_CLI_NO_RELAUNCH: 'true' },
    notFound: GeminiNotFound,
  });
}
