/** Injection token of the validated AppConfig (see @chronicle/platform's loadConfig). */
export const APP_CONFIG = Symbol('APP_CONFIG');
