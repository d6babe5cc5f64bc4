/** Injection token of the validated AppConfig (see @chronicle/platform's loadConfig). */
export const WORKER_CONFIG = Symbol('WORKER_CONFIG');
