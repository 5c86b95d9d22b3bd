/** The programs run in containers and commands end with one line `<PREFIX>{json}`; this finds the last. */
export function lastTaggedJson<T>(text: string | undefined, prefix: string): T | undefined {
  const line = (text ?? "").split("\n").reverse().find((l) => l.includes(prefix));
  if (!line) return undefined;
  try {
    return JSON.parse(line.slice(line.indexOf(prefix) + prefix.length)) as T;
  } catch {
    return undefined;
  }
}
