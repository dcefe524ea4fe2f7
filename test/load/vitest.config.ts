import { defineConfig } from 'vitest/config';

// `npm run test:load`: the bounded load tests, kept out of `npm test` (their files end in .load.ts).
export default defineConfig({
  test: {
    include: ['test/load/**/*.load.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
