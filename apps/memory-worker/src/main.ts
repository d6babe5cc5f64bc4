import './tracing';
import 'reflect-metadata';
import { migrateDatabase } from '@chronicle/event-store';
import { runProcess } from '@chronicle/platform';
import { startMemoryWorker } from './memory-worker.bootstrap';

void runProcess({ app: 'memory-worker', migrate: migrateDatabase, start: startMemoryWorker });
