# syntax=docker/dockerfile:1
# Tessera's image: the esbuild bundle (dist/) on plain Node with the production dependencies only, run as
# a non-root user exactly as `npm start` runs it. Build: `docker build -t tessera .` (docs/operations.md).
# It expects a PostgreSQL server (DATABASE_URL) and, in production, JWT_SECRET and SECRETS_KEY. Every stage
# starts from the same Node 24 LTS image (Node 20's support ended 2026-04-30, and Fastify's cookie@2 and
# content-disposition@3 need Node 22 or later); pin its digest for reproducible builds. package.json
# `engines` lists what else runs it (Node 20.19+ for development on machines that have no newer one).

# Every dependency, exactly as the lockfile says: the build needs esbuild.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# `npm run build`: src/server.ts bundled into dist/server.js (packages stay external), and
# src/lib/common-passwords.txt copied beside it (the password policy reads it next to the bundle).
FROM deps AS build
COPY tsconfig.json ./
COPY generated ./generated
COPY src ./src
RUN npm run build
# The console (console/ → console/dist/): built from its sources, the SDK's and the bundled document.
COPY console ./console
COPY clients/typescript/src ./clients/typescript/src
COPY scripts/build-console.mjs ./scripts/
RUN node scripts/build-console.mjs --force

# The production dependencies alone: the bundle imports its packages at run time.
FROM node:24-bookworm-slim AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim AS runtime
# HOST: listen on every interface of the container (the service's own default is 127.0.0.1).
# DATA_DIR: only used without DATABASE_URL (embedded PGlite, one process); /data is the one directory the
# service user may write. With DATABASE_URL set the service writes no file, so the root filesystem may be
# read-only.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
# The files belong to root and are read-only to the service user (uid 1000, the image's `node` user).
COPY --from=prod-deps /app/node_modules ./node_modules
# package.json carries "type": "module", which makes Node load dist/server.js as an ES module.
COPY package.json ./
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
RUN mkdir /data && chown 1000:1000 /data
USER 1000:1000
EXPOSE 3000
# /health answers 200 (status ok or degraded) while the main database answers, else 503. Slim images have
# no curl: Node's own fetch does the probe.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
# SIGTERM: requests in flight finish, then the process exits within SHUTDOWN_TIMEOUT_MS (default 10 s);
# give the container longer than that before it is killed (compose stop_grace_period, Kubernetes
# terminationGracePeriodSeconds).
STOPSIGNAL SIGTERM
# The flags of `npm start` (package.json): a 16 MB young generation and an old generation that grows to
# 1.5x its live size; README, "Where this departs from the house style". Node runs as PID 1 and handles
# SIGTERM itself (src/server.ts; with WORKERS above 1 the primary passes it on to every worker).
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist/server.js"]
