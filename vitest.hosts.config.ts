import { defineConfig } from 'vitest/config';

// `npm run test:hosts`: the real agent host CLIs (test/hosts/package.json), each against a mock of its
// model API on 127.0.0.1, with cairn installed from this checkout's tarball. Not part of `npm test`.
export default defineConfig({
  test: {
    include: ['test/hosts/**/*.test.ts'],
    // npm run bench:hosts: what cairn's capture hook costs a shell call of each real client
    benchmark: { include: ['bench/hosts.bench.ts'] },
    globalSetup: ['test/hosts/setup.ts'],
    // the first run installs the host CLIs and builds better-sqlite3 for the throwaway project
    hookTimeout: 600_000,
    testTimeout: 180_000,
    maxWorkers: 2,
  },
});
