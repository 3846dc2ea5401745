/**
 * `draft` completed with `members`, each placed right after the draft's member `after` names.
 * JSON keeps insertion order, and answers and events show a view's members in its order: what the
 * statement storing a document fills in (its number, its seller snapshot) goes back to its place.
 */
export function withMembersAfter<T extends object, M extends object>(
  draft: T,
  members: M,
  after: { [K in keyof M]: keyof T & string },
): T & M {
  const view: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(draft)) {
    view[name] = value;
    for (const member of Object.keys(after) as Array<keyof M & string>) {
      if (after[member] === name) view[member] = members[member];
    }
  }
  return view as T & M;
}
