export { parseQuickAdd, type QuickAddEvent, type QuickAddOptions } from './parse.ts';
