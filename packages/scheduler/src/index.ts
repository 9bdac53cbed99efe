/**
 * @calgate/scheduler — scheduled prompts: parsing schedules and computing their next runs (pure,
 * on `core`'s zone code), and delivering due prompts to webhooks and Letta agents.
 */
export * from './delivery/index.ts';
export * from './engine/index.ts';
export * from './schedule/index.ts';
