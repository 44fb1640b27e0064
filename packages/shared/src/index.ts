export * from './errors.js';
export * from './config.js';
export * from './logger.js';
export * from './grpc.js';
export * from './lifecycle.js';
export * from './time.js';
export * from './journal.js';
export * from './mysql.js';
