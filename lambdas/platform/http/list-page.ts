// One page of a list the operation holds whole, in the `{data, total_count}` shape of the list routes.
export function listPage<T, R = T>(all: readonly T[], query: { offset?: number | undefined; limit?: number | undefined }, view: (item: T) => R = (item) => item as unknown as R, defaultLimit = 50): { data: R[]; total_count: number } {
  const offset = query.offset ?? 0;
  return { data: all.slice(offset, offset + (query.limit ?? defaultLimit)).map(view), total_count: all.length };
}
