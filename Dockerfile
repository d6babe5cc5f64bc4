# One image for the three apps; docker-compose.yml picks the entry point.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# isolated-vm (the script sandbox) compiles with node-gyp when its prebuilt binary cannot be
# fetched; the image's own Node headers (/usr/local/include/node) spare node-gyp a download.
RUN apt-get update && apt-get install -y --no-install-recommends g++ make python3 \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY scripts ./scripts
COPY bench ./bench
COPY test/support ./test/support
# `npm run build` also builds the web client (Vite, a dev dependency) into dist/web, which the
# API serves at `/`.
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# the API (its /metrics included); a context worker's and a memory worker's /metrics (METRICS_PORT)
EXPOSE 3000 9464 9465
# Overridden per service in docker-compose.yml. The V8 flag is libs/platform/src/runtime.ts's.
CMD ["node", "--max-semi-space-size=32", "dist/apps/api/src/main.js"]
