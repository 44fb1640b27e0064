# syntax=docker/dockerfile:1
# The five service images, one target each, built from the repository root (the npm workspace
# lockfile lives there):
#   docker build --target gateway -t support-agent/gateway:0.1.0 .
# (`docker compose build` builds all five; `npm run images` builds them with podman, docs/deploy.md.)
# Stages shared by every target:
#   manifests   workspace package.json files only, so dependency layers are rebuilt only when a
#               manifest or the lockfile changes, not on every source edit
#   build       all dependencies, one `tsc -b` of every service and the packages they reference
#   deps        for each service, the production dependencies of that workspace only (/deps/<name>)
#   packages    the built @support-agent/shared, @support-agent/proto and @support-agent/events
#   base-files  the base image's files without its package managers
#   runtime     those files as one layer (npm and friends are not hidden in a lower layer, they
#               are absent), non-root, `node dist/main.js` as PID 1, the health probe, the labels
# then one target per service: its dependencies, the packages, its dist and its HEALTHCHECK.
#
# No port is baked into an image: every listener takes its default from the service's code, so
# PORT_BASE and the explicit variables (PORT, ADMIN_PORT, *_ADDR, METRICS_PORT) work in a
# container exactly as under `npm start`. Deployments set their listen addresses themselves
# (docker-compose.yml, deploy/k8s).
#
# Behind a TLS-intercepting proxy, hand npm the proxy's CA (and/or a whole .npmrc, e.g. for a
# registry mirror) as build secrets; they are mounted only while npm runs and never stored:
#   docker buildx build --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt …
#   podman build --secret id=npm_ca,src=… --secret id=npmrc,src=$HOME/.npmrc …
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages ./packages
COPY services ./services
RUN find packages services -mindepth 2 -type f ! -regex '[^/]*/[^/]*/package\.json' -delete \
 && find packages services -mindepth 1 -type d -empty -delete

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /app ./
# The build secrets npm_ca and npmrc, when given (see the top of this file).
RUN --mount=type=cache,target=/root/.npm \
    --mount=type=secret,id=npm_ca \
    --mount=type=secret,id=npmrc \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    if [ -s /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY packages/shared ./packages/shared
COPY packages/proto ./packages/proto
COPY packages/events ./packages/events
COPY services ./services
# Every service (and, through the project references, packages/shared, packages/proto and
# packages/events).
RUN node_modules/.bin/tsc -b services/*

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /app ./
# One production install per workspace (plus the workspace packages it links); each install's
# node_modules folders (the root one and any nested ones) are kept, paths intact, under
# /deps/<service>, so an image gets its own service's dependencies and nothing else.
# TypeScript arrives as a peer dependency of @qdrant/js-client-rest (for its type declarations;
# nothing loads it at runtime): it is deleted before the tree is kept.
RUN --mount=type=cache,target=/root/.npm \
    --mount=type=secret,id=npm_ca \
    --mount=type=secret,id=npmrc \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    if [ -s /run/secrets/npmrc ]; then export NPM_CONFIG_USERCONFIG=/run/secrets/npmrc; fi; \
    set -e; \
    for dir in services/*/; do \
      service="$(basename "${dir}")"; \
      npm ci --omit=dev --ignore-scripts --no-audit --no-fund --workspace "services/${service}"; \
      rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver; \
      mkdir -p "/deps/${service}"; \
      find . -name node_modules -type d -prune -exec cp -a --parents {} "/deps/${service}/" \;; \
      find . -name node_modules -type d -prune -exec rm -rf {} +; \
    done

FROM scratch AS packages
COPY --from=build /app/packages/shared/package.json /packages/shared/
COPY --from=build /app/packages/shared/dist /packages/shared/dist
COPY --from=build /app/packages/proto/package.json /packages/proto/
COPY --from=build /app/packages/proto/dist /packages/proto/dist
COPY --from=build /app/packages/events/package.json /packages/events/
COPY --from=build /app/packages/events/dist /packages/events/dist

FROM ${NODE_IMAGE} AS base-files
# Nothing runs npm at runtime: the package managers go before the files are taken.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*

FROM scratch AS runtime
COPY --from=base-files / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production
WORKDIR /app
# The HEALTHCHECK of every target: asks the service at the address its own config gives.
COPY deploy/healthcheck/healthcheck.mjs /app/healthcheck.mjs
# The image's files stay owned by root: the process (user "node", uid 1000) cannot change them.
USER 1000:1000
# node is PID 1 and handles SIGTERM itself (readiness fails first, calls drain).
CMD ["node", "dist/main.js"]
ARG NODE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

FROM runtime AS gateway
COPY --from=deps /deps/gateway/ ./
COPY --from=packages /packages ./packages
COPY --from=build /app/services/gateway/package.json ./services/gateway/
COPY --from=build /app/services/gateway/dist ./services/gateway/dist
# Read at start-up: the OpenAPI document (the contract) and the /docs page (Swagger UI).
COPY --from=build /app/services/gateway/openapi/openapi.json ./services/gateway/openapi/
COPY --from=build /app/services/gateway/static ./services/gateway/static
# The one-shot first-run bootstrap (compose service `init`, Kubernetes Job `bootstrap`).
COPY deploy/bootstrap/bootstrap.mjs /app/deploy/bootstrap.mjs
WORKDIR /app/services/gateway
LABEL org.opencontainers.image.title="support-agent-gateway" \
      org.opencontainers.image.description="Gateway: the public HTTP API of the Support Agent API, admin API and admin CLI"
# The default ports (the code's defaults; PORT_BASE or PORT/ADMIN_PORT/METRICS_PORT move them).
EXPOSE 8080 8081 9464
# Admin CLI in this image: node dist/cli/admin.js (ADMIN_URL, ADMIN_TOKEN).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs", "gateway"]

FROM runtime AS tickets
COPY --from=deps /deps/tickets/ ./
COPY --from=packages /packages ./packages
COPY --from=build /app/services/tickets/package.json ./services/tickets/
COPY --from=build /app/services/tickets/dist ./services/tickets/dist
WORKDIR /app/services/tickets
LABEL org.opencontainers.image.title="support-agent-tickets" \
      org.opencontainers.image.description="Tickets service: organization-scoped tickets over gRPC, transactional outbox to NATS JetStream"
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs", "tickets"]

FROM runtime AS knowledge
COPY --from=deps /deps/knowledge/ ./
COPY --from=packages /packages ./packages
COPY --from=build /app/services/knowledge/package.json ./services/knowledge/
COPY --from=build /app/services/knowledge/dist ./services/knowledge/dist
WORKDIR /app/services/knowledge
LABEL org.opencontainers.image.title="support-agent-knowledge" \
      org.opencontainers.image.description="Knowledge service: knowledge-base search and embeddings over gRPC, backed by Qdrant"
EXPOSE 50052 9464
# Re-index after changing the embedding model or size: node dist/cli/reindex.js
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs", "knowledge"]

FROM runtime AS answers
COPY --from=deps /deps/answers/ ./
COPY --from=packages /packages ./packages
COPY --from=build /app/services/answers/package.json ./services/answers/
COPY --from=build /app/services/answers/dist ./services/answers/dist
WORKDIR /app/services/answers
LABEL org.opencontainers.image.title="support-agent-answers" \
      org.opencontainers.image.description="Answers service: grounded answers and ticket triage over gRPC"
EXPOSE 50053 9464
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs", "answers"]

FROM runtime AS digest
COPY --from=deps /deps/digest/ ./
COPY --from=packages /packages ./packages
COPY --from=build /app/services/digest/package.json ./services/digest/
COPY --from=build /app/services/digest/dist ./services/digest/dist
WORKDIR /app/services/digest
LABEL org.opencontainers.image.title="support-agent-digest" \
      org.opencontainers.image.description="Digest service: weekly FAQ digests from ticket events over gRPC"
EXPOSE 50054 9464
# Backfill: node dist/cli/backfill.js --from-stream
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/healthcheck.mjs", "digest"]
