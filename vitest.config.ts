import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
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
    // the real host CLIs run in `npm run test:hosts` (vitest.hosts.config.ts)
    exclude: [...configDefaults.exclude, 'test/hosts/**'],
    // Most files spend their time waiting on the executables they spawn, so two files at a time keep a
    // two-core machine busy (vitest's default there is one); timing-sensitive tests use generous bounds.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', closingLine],
  },
});
