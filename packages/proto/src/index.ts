// Generated gRPC contracts, one namespace per service (source: proto/).
export * as tickets from './gen/tickets/v1/tickets.js';
export * as knowledge from './gen/knowledge/v1/knowledge.js';
export * as answers from './gen/answers/v1/answers.js';
export * as digest from './gen/digest/v1/digest.js';
export * as health from './gen/grpc/health/v1/health.js';
