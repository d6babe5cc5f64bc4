export * from './accounts.errors';
export * from './api-key';
export * from './accounts.repository';
export * from './adventure-owners.repository';
export * from './rate-limiter';
export * from './token-budget';
export * from './usage-ledger';
export * from './accounts.module';
