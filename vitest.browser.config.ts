import { defineConfig } from 'vitest/config';

// `npm run test:browser`: what a person sees in a real browser (headless Chromium from Debian's
// chromium package, driven by playwright-core). Kept apart from `npm test`, which needs no browser;
// .ci/run installs chromium when it is missing and runs both.
export default defineConfig({
  test: {
    include: ['test/**/*.browser.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
