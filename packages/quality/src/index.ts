// @support-agent/quality: how the project measures and fits its quality offline, on labelled
// data it reads from where it lies (docs/answer-quality.md). Nothing here runs in a service.
export * from './bm25-baseline.js';
export * from './calibration-metrics.js';
export * from './classification-metrics.js';
export * from './eval-data.js';
export * from './in-process-kb.js';
export * from './labelled-queries.js';
export * from './listwise-fit.js';
export * from './logistic-fit.js';
export * from './retrieval-metrics.js';
