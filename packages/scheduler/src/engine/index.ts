export * from './boss.ts';
export * from './deliver.ts';
export * from './jobs.ts';
export * from './plan.ts';
export * from './scheduling.ts';
export * from './worker.ts';
