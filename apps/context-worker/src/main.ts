import './tracing';
import 'reflect-metadata';
import { migrateDatabase } from '@chronicle/event-store';
import { runProcess } from '@chronicle/platform';
import { startContextWorker } from './context-worker.bootstrap';

void runProcess({ app: 'context-worker', migrate: migrateDatabase, start: startContextWorker });
