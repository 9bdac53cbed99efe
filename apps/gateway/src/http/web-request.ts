/**
 * The web Request an SDK handler answers in place of a Fastify request (Fastify has already read
 * and parsed the body), with an abort signal the gateway controls.
 */
import type { FastifyReply } from 'fastify';

/**
 * Requests kept while their reply is open. undici's Request follows the signal it was given only
 * while the Request object lives: the parent signal holds the Request's own controller weakly, and
 * a finalizer drops the link once the Request is collected. A `subscriptions/listen` stream
 * outlives the handler call that made it, and the SDK keeps only `request.signal` — so without
 * this, an abort after the next garbage collection would never reach the stream.
 */
const open = new WeakMap<FastifyReply['raw'], Request>();

/** A POST to `url` with `headers`; `abort()` ends what the handler started (and so does a client that leaves early). */
export function webRequest(
  reply: FastifyReply,
  url: string,
  headers: Headers,
): { request: Request; abort: () => void } {
  const controller = new AbortController();
  const request = new Request(url, { method: 'POST', headers, signal: controller.signal });
  open.set(reply.raw, request);
  reply.raw.once('close', () => {
    open.delete(reply.raw);
    if (!reply.raw.writableFinished) {
      controller.abort();
    }
  });
  return { request, abort: () => controller.abort() };
}
