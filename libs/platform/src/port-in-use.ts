// Two installations on one host (or a second worker of one app) collide on a port. Node says
// "listen EADDRINUSE"; the operator needs the port and the setting that moves it.

/**
 * The error to report when `error` is a taken port, naming `variable` (PORT, METRICS_PORT)
 * and what to set it to; null for any other error.
 */
export function portInUse(
  error: unknown,
  variable: string,
  port: number,
  host: string,
): Error | null {
  if ((error as NodeJS.ErrnoException | null)?.code !== 'EADDRINUSE') return null;
  return new Error(
    `${variable} ${port} on ${host} is in use (another Chronicle or another worker on this host?): set ${variable} to a free port, or 0 for any free port`,
  );
}
