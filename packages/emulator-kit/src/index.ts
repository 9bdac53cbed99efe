/**
 * @calgate/emulator-kit — what Calgate's HTTP emulators (Google, Microsoft Graph, Letta) share:
 * a route table, the request pipeline with scripted faults and a request log, the fault table,
 * the fault/request half of the admin API, and a loopback server.
 */
export {
  type AdminContext,
  type FaultAdmin,
  type FaultAdminDeps,
  faultAdmin,
  faultAdminRoutes,
} from './admin.ts';
export {
  checkScripted,
  type ErrorAction,
  type ErrorRateRuleOf,
  type FaultAction,
  type FaultDecisionOf,
  FaultTable,
  type LatencyRuleOf,
  opMatches,
  opsMatch,
  type ScriptedFaultOf,
  seededRandom,
} from './faults.ts';
export { type Listening, type ListenOptions, listen } from './listen.ts';
export {
  type BaseLogEntry,
  createPipeline,
  type HandlerInput,
  type PipelineHooks,
  type RequestInfo,
  record,
} from './pipeline.ts';
export {
  bearerToken,
  DEFAULT_MAX_BODY,
  queryObject,
  type Reply,
  readText,
  type SendOptions,
  send,
} from './reply.ts';
export { type KitRoute, type Match, Router, type RouterOptions } from './router.ts';
