import 'reflect-metadata';
import { runProcess } from '@chronicle/platform';
import { startContextWorker } from './context-worker.bootstrap';

void runProcess({ app: 'context-worker', start: startContextWorker });
