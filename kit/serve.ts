/** The shell of a program that serves until it is told to stop, and its exit code. */

/**
 * Runs a listener until SIGTERM or SIGINT: says where it serves once it listens, or why it cannot
 * (a bad --port or address: exit 2).
 */
export async function serveUntilSignal(name: string, service: { readonly ready: Promise<number>; stop(): void }, serving: (port: number) => string): Promise<number> {
  let port: number;
  try {
    port = await service.ready;
  } catch (e) {
    service.stop();
    process.stderr.write(`${name}: ${(e as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`${name}: ${serving(port)}\n`);
  await new Promise<void>((resolve) => {
    for (const sig of ["SIGTERM", "SIGINT"] as const) process.once(sig, () => (service.stop(), resolve()));
  });
  return 0;
}
