/** The AppConfig as the auth module was given it. */
export const AUTH_CONFIG = Symbol('AUTH_CONFIG');
