/**
 * Text for xmlbuilder2's `txt()`/`att()`: its writer escapes `&` only where it does not start
 * something shaped like an entity (`&name;`, `&#123;`), so a description such as `R&D;` would be
 * written as an undefined entity (not well-formed XML) and a literal `&amp;` would reach the
 * reader as `&`. Escaping every `&` first leaves the writer nothing to guess.
 */
export function xmlText(value: string): string {
  return value.replace(/&/g, '&amp;');
}
