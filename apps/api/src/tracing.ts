// Imported first by main.ts: the SDK must patch http, express, pg and ioredis before they load.
import { startTracing } from '@chronicle/telemetry';

startTracing('api');
