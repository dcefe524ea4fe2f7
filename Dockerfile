# Shipping Order Sandbox: the image for shared partner test environments.
# Build:  docker build -t shipping-sandbox .
# Run:    docker run --hostname sandbox -p 4010:4010 -v sandbox-data:/data -e SANDBOX_TOKENS=partner-a,partner-b shipping-sandbox
# (a fixed --hostname lets a container recreated on the same volume take over the data file's lock)
# Every setting is an environment variable (see docs/guides/shared-deployments.md); flags given after the
# image name are passed to the CLI too.

# --- build: compile TypeScript to dist/ ----------------------------------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` build needs src/, copied below, and runs as `npm run build`.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- runtime: production dependencies, the build, the specs, fixtures and dashboard ---------------------------
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4010 \
    SANDBOX_DATA=/data/sandbox.json \
    SANDBOX_WEBHOOK_TARGETS=public
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: no `prepare` build here (no compiler, no sources); dist/ comes from the build stage.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The CLI on the PATH as its package names it, for the client commands in a job without Node:
# docker exec <container> shipping-sandbox report --url http://127.0.0.1:4010 --token ... --require ...
RUN chmod +x dist/cli.js && ln -s /app/dist/cli.js /usr/local/bin/shipping-sandbox
COPY spec ./spec
COPY fixtures ./fixtures
COPY dashboard ./dashboard
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 4010
# No curl in the slim image: node itself asks the health endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4010)+'/__sandbox/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 (no shell in between), so SIGTERM reaches the CLI, which finishes the
# requests and webhook attempts in flight, writes the data file and exits 0. STOPSIGNAL is the
# default SIGTERM; give the container a stop grace of at least SANDBOX_WEBHOOK_TIMEOUT + 5 s
# (docker stop -t 15; stop_grace_period in compose.yaml). The contract: docs/guides/image.md.
ENTRYPOINT ["node", "dist/cli.js"]
