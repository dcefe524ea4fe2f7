import { defineConfig } from 'vitest/config';

// The Testcontainers module against the image, run by scripts/container-test.sh once it has
// built the image and started podman's Docker-compatible socket (root only; .ci/run runs it).
// Its files end in .container.ts, so neither npm test nor test:load picks them up.
export default defineConfig({
  test: {
    include: ['test/container/**/*.container.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
  },
});
