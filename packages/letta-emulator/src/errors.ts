/**
 * Letta's error shapes. The server is FastAPI: handled errors answer `{detail: "…"}` and
 * request validation answers 422 with `{detail: [{type, loc, msg, input}]}`. Handlers throw
 * these and the pipeline maps them to a response in one place.
 */

/** One pydantic validation issue, as FastAPI lists them in a 422 body. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

export class LettaApiError extends Error {
  readonly status: number;
  readonly detail: string | ValidationIssue[];
  readonly headers: Record<string, string>;

  constructor(status: number, detail: string | ValidationIssue[], headers: Record<string, string> = {}) {
    super(typeof detail === 'string' ? detail : detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
    this.name = 'LettaApiError';
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }

  toBody(): { detail: string | ValidationIssue[] } {
    return { detail: this.detail };
  }
}

export const apiErrors = {
  unauthorized: () => new LettaApiError(401, 'Unauthorized'),
  agentNotFound: (agentId: string) => new LettaApiError(404, `Agent not found with id=${agentId}`),
  routeNotFound: () => new LettaApiError(404, 'Not Found'),
  methodNotAllowed: () => new LettaApiError(405, 'Method Not Allowed'),
  badRequest: (detail: string) => new LettaApiError(400, detail),
  invalid: (issues: ValidationIssue[]) => new LettaApiError(422, issues),
  tooLarge: () => new LettaApiError(413, 'Request Entity Too Large'),
};

const DEFAULT_DETAIL: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  429: 'Rate limit exceeded',
  500: 'An internal server error occurred',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The error a fault rule injects: Letta's `{detail}` body with a default text per status. */
export function errorForStatus(status: number, detail?: string, retryAfterSeconds?: number): LettaApiError {
  const headers: Record<string, string> =
    retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
  return new LettaApiError(status, detail ?? DEFAULT_DETAIL[status] ?? 'Error', headers);
}
