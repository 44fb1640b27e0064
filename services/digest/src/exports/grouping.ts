// `@support-agent/digest/grouping`: the digest's weekly grouping of tickets into topics and the
// settings it runs with, for tools that run it in process (scripts/eval-digest-folds.ts). The
// service itself never imports this file.
export { digestSettings, loadDigestConfig } from '../config.js';
export { groupWeek, type GroupingSettings } from '../domain/group-week.js';
export type { KbHit } from '../domain/ports.js';
