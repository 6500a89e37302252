export { Worker, Permanent, VERSION, isTransient, pgConfig } from './worker.js';
export type { Handler, Logger, StepContext, WorkerOptions } from './worker.js';
