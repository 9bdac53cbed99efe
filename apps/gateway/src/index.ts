/**
 * @calgate/gateway — the HTTP gateway (`buildApp`) and its runtime wiring.
 */
export { type AppDeps, buildApp } from './app.ts';
export { KeyAuthenticator } from './auth.ts';
export { main } from './cli.ts';
export { type Config, loadConfig } from './config.ts';
export { createLogger } from './logger.ts';
export { type RunningGateway, serve } from './serve.ts';
