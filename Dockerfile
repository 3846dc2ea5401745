# syntax=docker/dockerfile:1
# Build and run ledgerkey on Node 24 LTS. The image's own Node is used; the `node` npm package
# (a devDependency that pins Node 24 for npm scripts on machines with an older Node) is not needed.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
# Only what runs: no dev dependencies, and no embedded PostgreSQL (an optional dependency, ~100 MB of
# binaries for the zero-setup `npm start`). The image needs DATABASE_URL; without it the API says so.
RUN npx nest build api && npx nest build worker && npx nest build provider-sandbox \
  && npm prune --omit=dev --omit=optional --ignore-scripts

FROM node:24-bookworm-slim
# NODE_ENV=production: no demo company (whose API key would be printed into the logs).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/var/lib/ledgerkey
# DATA_DIR holds the generated secrets.key when SECRETS_KEY is unset (and the embedded database
# without DATABASE_URL): writable by the runtime user; mount a volume there to keep it. The same for
# the provider sandbox's state (docker-compose's provider-sandbox service).
RUN mkdir -p /var/lib/ledgerkey /var/lib/provider-sandbox && chown node:node /var/lib/ledgerkey /var/lib/provider-sandbox
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The settings and flags of package.json's start script (docs/decisions/0037-memory-settings.md).
ENV GLIBC_TUNABLES=glibc.malloc.mmap_threshold=65536
CMD ["node", "--max-semi-space-size=8", "dist/apps/api/src/main.js"]
