export * from './pool.js';
export * from './migrations.js';
export * from './transactions.js';
export * from './silence.js';
