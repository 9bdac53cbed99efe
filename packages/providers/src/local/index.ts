export { LocalCalendarProvider } from './provider.ts';
