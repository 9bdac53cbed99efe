/** The dashboard's one way to the REST API: same-origin cookie, CSRF header on every write. */
let csrfToken = '';

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function setCsrf(token: string): void {
  csrfToken = token;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
  }
  if (method !== 'GET' && csrfToken !== '') {
    headers['x-calgate-csrf'] = csrfToken;
  }
  const response = await fetch(path.startsWith('/api/') ? path : `/api/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const data = text === '' ? null : (JSON.parse(text) as unknown);
  if (!response.ok) {
    const message =
      (data as { error?: { message?: string } } | null)?.error?.message ??
      `Request failed (${response.status})`;
    throw new ApiError(response.status, message);
  }
  return data as T;
}

export async function loadCsrf(): Promise<void> {
  setCsrf((await api<{ csrfToken: string }>('GET', '/auth/csrf')).csrfToken);
}
