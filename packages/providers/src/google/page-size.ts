/** Google's ceiling for events.list maxResults. */
export const MAX_PAGE_SIZE = 2500;

/** Google's events.list page size: 1…2500, its default 250 when the number is unusable. */
export function clampPageSize(maxResults: number): number {
  if (!Number.isFinite(maxResults)) {
    return 250;
  }
  return Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(maxResults)));
}
