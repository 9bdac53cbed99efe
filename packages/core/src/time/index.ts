export * from './civil.ts';
export * from './parse.ts';
export * from './zone.ts';
