export { type MirrorConnection, MirroredCalendarProvider, type MirrorReadDeps } from './provider.ts';
