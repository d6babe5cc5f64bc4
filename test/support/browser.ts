// A real headless Chromium for the web client's tests and benchmark: Debian's `chromium`
// package (`.ci/run` installs it), driven by playwright-core, which downloads no browser.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** The system's Chromium, or null when it is not installed. */
export function chromiumPath(): string | null {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      const found = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (found) return found;
    } catch {
      // not this one
    }
  }
  return null;
}

const ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-gpu',
];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh browser profile (its own user-data-dir), removed on close. */
export async function launchBrowser(
  options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark' } = {},
): Promise<TestBrowser> {
  const executablePath = chromiumPath();
  if (!executablePath) {
    throw new Error('chromium is not installed: apt-get install -y chromium (.ci/run does)');
  }
  const profile = mkdtempSync(join(tmpdir(), 'chronicle-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ARGS,
    viewport: options.viewport ?? { width: 1280, height: 860 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
