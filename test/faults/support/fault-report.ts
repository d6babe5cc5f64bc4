// The counts RELIABILITY.md quotes: with FAULTS_REPORT=<file> set, every scenario's history
// check appends one JSON line there (the scenario, what was injected, the checker's counts).
import { appendFileSync } from 'node:fs';
import type { HistoryReport } from '@chronicle/testing';

export function recordScenario(scenario: string, injected: string, report: HistoryReport): void {
  const file = process.env.FAULTS_REPORT;
  if (!file) return;
  appendFileSync(
    file,
    `${JSON.stringify({ scenario, injected, at: new Date().toISOString(), ...report })}\n`,
  );
}
