import 'reflect-metadata';
import { runProcess } from '@chronicle/platform';
import { startApi } from './api.bootstrap';

void runProcess({ app: 'api', start: startApi });
