import './tracing';
import 'reflect-metadata';
import { migrateDatabase } from '@chronicle/event-store';
import { runProcess } from '@chronicle/platform';
import { startApi } from './api.bootstrap';

void runProcess({ app: 'api', migrate: migrateDatabase, start: startApi });
