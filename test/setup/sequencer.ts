// The order test files start in. With two workers the suite's wall time is at least its longest file, and
// more when that file starts late: on a fresh clone (CI) vitest has no durations cached and starts files in
// the order it found them, which once put the 6-minute opencode file last-but-one and added 2 minutes. The
// files over half a minute go first, longest first (durations of a whole run on the 2-core machine, 2026-12-04:
// 170 s for Qwen's down to 29 s; a hint for scheduling only: every file runs either way); the rest keep vitest's
// own order.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const heavy = [
  'test/e2e/qwen-driver.test.ts',
  'test/e2e/opencode-server.test.ts',
  'test/e2e/gemini-driver.test.ts',
  'test/e2e/opencode-replay.test.ts',
  'test/e2e/check-scope.test.ts',
  'test/e2e/opencode-replay-workspace.test.ts',
  'test/e2e/claude-code-driver.test.ts',
  'test/drivers/qwen/hook.test.ts',
  'test/e2e/opencode-secret.test.ts',
  'test/e2e/export-names.test.ts',
  'test/e2e/export.test.ts',
  'test/e2e/codex-driver.test.ts',
  'test/e2e/gates.test.ts',
  'test/drivers/opencode/override.test.ts',
];

export default class HeavyFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = heavy.findIndex((path) => file.moduleId.endsWith(path));
      return at === -1 ? heavy.length : at;
    };
    return sorted
      .map((file, index) => ({ file, index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}
