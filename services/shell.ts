/** One word for a POSIX shell, whatever it contains. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'"'"'`)}'`;
