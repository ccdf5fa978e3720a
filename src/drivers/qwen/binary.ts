// Finding the `qwen` binary: `--qwen-bin`, else `qwen` on PATH (an `npm i -g @qwen-code/qwen-code` puts its
// entry script there), else this project's own node_modules (the pinned devDependency the tests use:
// `@qwen-code/qwen-code/cli-entry.js`, a Node script). It is never a dependency of replay-history. It declares
// Node >= 22 and runs on Node 20. Another version than the tested one runs, with a warning.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { executable, type FoundBinary, findBinary } from '../common/binary.js';

const require = createRequire(import.meta.url);

export class QwenNotFound extends Error {}

export type QwenBinary = FoundBinary;

/** The pinned package's entry script, where it is installed. */
function packaged(): string | undefined {
  try {
    const root = dirname(require.resolve('@qwen-code/qwen-code/package.json'));
    const path = join(root, 'cli-entry.js');
    return executable(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The binary to run, with its version. Throws QwenNotFound saying what was looked for. */
export function findQwen(option?: string, env: NodeJS.ProcessEnv = process.env): QwenBinary {
  return findBinary({
    ...(option ? { option } : {}),
    optionName: '--qwen-bin',
    command: 'qwen',
    packaged,
    env,
    notFound: QwenNotFound,
  });
}
