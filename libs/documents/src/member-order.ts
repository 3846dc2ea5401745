/**
 * `draft` with `key: value` placed right after its member `after`. JSON keeps insertion order,
 * and a view's answers and events show members in the view's order: a member the database fills
 * in (a document's seller snapshot) goes back to its place.
 */
export function withMemberAfter<T extends object, K extends string, V>(
  draft: T,
  after: keyof T & string,
  key: K,
  value: V,
): T & Record<K, V> {
  const result: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(draft)) {
    result[name] = member;
    if (name === after) result[key] = value;
  }
  return result as T & Record<K, V>;
}
