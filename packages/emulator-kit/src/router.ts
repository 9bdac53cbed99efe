/** A route table matched by method and path pattern (`:name` matches one path segment). */
import type { Reply } from './reply.ts';

export interface KitRoute<C> {
  method: string;
  /** `/v1.0/me/events/:eventId` — `:name` matches one path segment. */
  pattern: string;
  /** The operation name fault rules and the request log use, e.g. `events.list`. */
  op: string;
  handler: (ctx: C) => Reply | Promise<Reply>;
}

export interface RouterOptions {
  /** Also match the pattern with (or without) a trailing slash. */
  optionalTrailingSlash?: boolean;
}

export type Match<R> = { route: R; params: Record<string, string> } | 'wrongMethod' | null;

interface Compiled<R> {
  route: R;
  method: string;
  regex: RegExp;
  names: string[];
}

export class Router<R extends { method: string; pattern: string }> {
  readonly #routes: Compiled<R>[] = [];
  readonly #optionalSlash: boolean;

  constructor(options: RouterOptions = {}) {
    this.#optionalSlash = options.optionalTrailingSlash ?? false;
  }

  add(routes: R[]): void {
    for (const route of routes) {
      const names: string[] = [];
      const pattern = this.#optionalSlash ? route.pattern.replace(/\/$/, '') : route.pattern;
      const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, (_m, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      const regex = new RegExp(this.#optionalSlash ? `^${source}/?$` : `^${source}$`);
      this.#routes.push({ route, method: route.method, regex, names });
    }
  }

  /** The route for this method and path; `'wrongMethod'` when only other methods match the path. */
  match(method: string, path: string): Match<R> {
    let pathMatched = false;
    for (const compiled of this.#routes) {
      const m = compiled.regex.exec(path);
      if (m === null) {
        continue;
      }
      pathMatched = true;
      if (compiled.method !== method) {
        continue;
      }
      const params: Record<string, string> = {};
      compiled.names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] ?? '');
      });
      return { route: compiled.route, params };
    }
    return pathMatched ? 'wrongMethod' : null;
  }
}
