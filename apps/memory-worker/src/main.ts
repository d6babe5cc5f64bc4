import 'reflect-metadata';
import { runProcess } from '@chronicle/platform';
import { startMemoryWorker } from './memory-worker.bootstrap';

void runProcess({ app: 'memory-worker', start: startMemoryWorker });
