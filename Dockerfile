# syntax=docker/dockerfile:1

# The Calgate image: the gateway by default (`calgate serve`); the same image runs `calgate migrate`
# and the worker (`node apps/gateway/src/bin/calgate.js worker`). The image runs the sources as
# JavaScript with their types erased at build time (scripts/build-production-tree.ts).

FROM node:24-bookworm-slim AS base
WORKDIR /app
ENV CI=true \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# Only the manifests, so that the dependency layer below is rebuilt when they change and not
# when a source file does (COPY --from compares content).
FROM base AS manifests
COPY . /src
RUN mkdir /out \
 && cd /src \
 && cp package.json package-lock.json /out/ \
 && find apps packages -mindepth 2 -maxdepth 2 -name package.json -exec cp --parents {} /out/ \;

FROM base AS build
COPY --from=manifests /out/ ./
# Install scripts stay off: the Prisma CLI's would download engines we do not use; the client is
# generated below.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts
COPY . .
# The runtime stage gets /prod only: the runtime workspaces' sources as JavaScript (no tests), the built
# dashboard, the migrations and the production dependencies (no vitest, TypeScript, Prisma CLI,
# rolldown, emulators or embedded PostgreSQL). Tests build and start the same tree.
RUN node scripts/prisma-generate.ts \
 && npm run build:dashboard \
 && node scripts/build-production-tree.ts /prod

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
# A bounded young generation for every node process of the image (CLI and worker included); the
# gateway's CMD also bounds how far the old generation grows (see there).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=8 \
    HOST=0.0.0.0 \
    PORT=8787 \
    DATA_DIR=/data
# Sources and dependencies stay owned by root: the service can read them, not change them.
COPY --from=build /prod /app
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8787) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The old generation grows to 1.3× what survived the last full collection, not up to 4×: under 16
# clients of list_events the gateway holds 230–255 MB of RSS instead of ~700 MB. No pretenuring:
# V8's allocation-site pretenuring kept each answer's data alive until a full collection, ~40 % of
# the gateway's CPU went to collecting it (bench/results/peer.md). V8 flags Node refuses in
# NODE_OPTIONS, hence here.
CMD ["node", "--heap-growing-percent=30", "--no-allocation-site-pretenuring", "apps/gateway/src/bin/calgate.js", "serve"]
