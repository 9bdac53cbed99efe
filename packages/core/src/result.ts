/** A value or an error, for domain code that reports failure without throwing. */
export type Result<V, E = Error> = { ok: true; value: V } | { ok: false; error: E };

export const ok = <V>(value: V): Result<V, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** Returns the value, or throws the error: for the edge of the system only. */
export function unwrap<V, E>(result: Result<V, E>): V {
  if (result.ok) {
    return result.value;
  }
  throw result.error;
}
