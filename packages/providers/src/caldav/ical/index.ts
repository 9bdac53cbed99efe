export * from './expand.ts';
export * from './export.ts';
export * from './read.ts';
export * from './stream.ts';
export * from './write.ts';
export * from './zones.ts';
