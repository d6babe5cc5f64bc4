/** The `${Name}` placeholders of a scenario's text, in order of first appearance. */
export function placeholderNames(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/\$\{([^}]*)\}/g)) {
    if (!names.includes(match[1])) names.push(match[1]);
  }
  return names;
}
