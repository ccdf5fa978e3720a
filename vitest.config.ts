import { defineConfig } from 'vitest/config';
import HeavyFirst from './test/setup/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/environment.ts'],
    sequence: { sequencer: HeavyFirst },
    // A bound for a hang, not a speed test: on a loaded 2-core machine a real agent's start-up takes several
    // times its quiet figure, and no test's outcome may depend on that. Speed is measured in bench/.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Most of the suite waits on child processes (the CLI, real agents), not on its own CPU: two files at once
    // fit a 2-core machine, where vitest's default (cores - 1) would run them one by one.
    maxWorkers: 2,
  },
});
