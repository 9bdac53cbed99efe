/** A route of the running app: one method and its URL pattern (`:id` parameters, `*` wildcards). */
export interface AppRoute {
  method: string;
  url: string;
}

/**
 * Every route of the running app from `printRoutes({ commonPrefix: false })`: a tree whose lines
 * hold a path piece and its methods, indented by depth; a route is the concatenation of its
 * ancestors' pieces. Reading the live app means a route added later is covered without an edit.
 * HEAD (which Fastify adds beside every GET) is left out.
 */
export function routesOf(printed: string): AppRoute[] {
  const stack: string[] = [];
  const routes: AppRoute[] = [];
  for (const line of printed.split('\n')) {
    const marker = line.search(/[├└]── /);
    if (marker < 0) {
      continue;
    }
    const depth = marker / 4;
    const match = /^(.*?) \(([^)]*)\)$/.exec(line.slice(marker + 4));
    if (match === null) {
      continue;
    }
    const [, piece = '', methods = ''] = match;
    stack.length = depth;
    stack.push(piece === '(empty root node)' ? '' : piece);
    const url = stack.join('');
    for (const method of methods.split(',').map((m) => m.trim())) {
      if (method !== '-' && method !== '' && method !== 'HEAD') {
        routes.push({ method, url });
      }
    }
  }
  return routes;
}
