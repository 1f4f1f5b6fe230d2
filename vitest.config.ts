import { defineConfig } from 'vitest/config';
import type { Reporter } from 'vitest/reporters';

/** One plain closing line (`vitest: N passed, N failed`) that CI logs can be read by, after the usual report. */
const closingLine: Reporter = {
  onFinished(files = []) {
    const counts = { pass: 0, fail: 0, skip: 0 };
    const walk = (tasks: { type: string; mode?: string; result?: { state?: string }; tasks?: unknown[] }[]) => {
      for (const t of tasks) {
        if (t.type === 'test') {
          const state = t.result?.state;
          if (state === 'pass') counts.pass++;
          else if (state === 'fail') counts.fail++;
          else counts.skip++;
        } else if (t.tasks) walk(t.tasks as never);
      }
    };
    walk(files as never);
    process.stdout.write(`vitest: ${counts.pass} passed, ${counts.fail} failed${counts.skip ? `, ${counts.skip} skipped` : ''}\n`);
  },
};

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', closingLine],
  },
});
