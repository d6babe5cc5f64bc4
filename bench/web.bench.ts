// `npm run bench -- web`: the web client's figures (issue 14), measured in a real headless
// Chromium against the built API and context worker:
//   - the JavaScript of the first load of `/`, gzipped (target ≤ 300 KB);
//   - how long after a streamed chunk reaches the page's stream reader it is on screen: the
//     first frame after the story shows it (target ≤ 50 ms);
//   - a 2,000-action adventure (written straight into the log) opened, scrolled and paged back:
//     the longest task the page ran (target: none over 200 ms).
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { type AdventureCreated } from '@chronicle/adventure';
import { playedAdventure } from '@chronicle/adventure/testing';
import { EventStoreRepository } from '@chronicle/event-store';
import { AppSystem } from '@chronicle/testing';
import { launchBrowser } from '../test/support/browser';
import { postAdventure } from './apps';
import { appendHistory } from './history';
import { summarize } from './stats';

const LONG_TURNS = 1_000; // two story actions a turn, plus the opening: 2,001 actions
const STREAMED_TURNS = 8;
const CHUNKS_PER_TURN = 24;
const TARGET_JS_KB = 300;
const TARGET_PAINT_MS = 50;
const TARGET_LONG_TASK_MS = 200;

// Runs in the page before the client: timestamps every read of a stream that carries a chunk
// frame, then waits for the frame in which the streaming paragraph has changed and takes the
// time just after that frame was painted (a message posted from requestAnimationFrame runs
// after the frame). Long tasks are recorded from the start.
const INSTRUMENT = `
  window.__bench = { paints: [], longTasks: [], layoutShift: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__bench.layoutShift += entry.value;
  }).observe({ type: 'layout-shift', buffered: true });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__bench.longTasks.push(entry.duration);
  }).observe({ type: 'longtask', buffered: true });
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function () {
    return read.call(this).then((result) => {
      if (typeof result.value === 'string' && result.value.includes('event: chunk')) {
        const arrived = performance.now();
        const before = document.querySelector('[data-testid=streaming]')?.textContent ?? '';
        const channel = new MessageChannel();
        const check = () => {
          const now = document.querySelector('[data-testid=streaming]')?.textContent ?? '';
          if (now !== before || !document.querySelector('[data-testid=streaming]')) {
            channel.port1.onmessage = () => window.__bench.paints.push(performance.now() - arrived);
            channel.port2.postMessage(0);
          } else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      }
      return result;
    });
  };
`;

export default async function webBench(): Promise<string> {
  const system = await AppSystem.start({
    fake: {
      defaultReply: {
        text: 'The lamp turns. '.repeat(40),
        chunks: CHUNKS_PER_TURN,
        delayMs: 25,
      },
    },
    database: { empty: true },
  });
  const browser = await launchBrowser();
  try {
    return await system.explainFailure(async () => {
      const headers = {
        authorization: `Bearer ${system.apiKey}`,
        'content-type': 'application/json',
      };
      const adventureId = await postAdventure(system.apiUrl, headers, {
        title: 'Streaming',
        opening: 'The lamp is lit.',
      });
      const view = (await (
        await fetch(`${system.apiUrl}/v1/adventures/${adventureId}`, { headers })
      ).json()) as { ownerId: string };

      const page = await browser.context.newPage();
      await page.addInitScript(INSTRUMENT);
      const scripts: Array<Promise<number>> = [];
      page.on('response', (response) => {
        if (response.request().resourceType() === 'script') {
          scripts.push(response.body().then((body) => gzipSync(body, { level: 9 }).length));
        }
      });

      // First load, signed in through the fragment link.
      await page.goto(`${system.apiUrl}/#key=${encodeURIComponent(system.apiKey)}`);
      await page.getByRole('heading', { name: 'Adventures' }).waitFor();
      const jsGzipBytes = (await Promise.all(scripts)).reduce((a, b) => a + b, 0);

      // Streamed turns.
      await page.goto(`${system.apiUrl}/?adventure=${adventureId}`);
      const action = page.getByRole('textbox', { name: 'Action', exact: true });
      for (let turn = 0; turn < STREAMED_TURNS; turn++) {
        await action.fill(`look around ${turn}`);
        await action.press('Enter');
        await page.getByTestId('streaming').waitFor();
        await page.locator('.live').waitFor({ state: 'detached', timeout: 30_000 });
      }
      const paints = (await page.evaluate('window.__bench.paints')) as number[];
      const layoutShift = (await page.evaluate('window.__bench.layoutShift')) as number;

      // The long adventure, opened in a fresh page.
      const history = playedAdventure(LONG_TURNS, 400);
      const longId = randomUUID();
      const [first, ...rest] = history.events;
      await appendHistory(new EventStoreRepository(system.database.db), longId, [
        {
          ...first,
          data: { ...(first as AdventureCreated).data, adventureId: longId, ownerId: view.ownerId },
        },
        ...rest,
      ]);
      const long = await browser.context.newPage();
      await long.addInitScript(INSTRUMENT);
      const opened = Date.now();
      await long.goto(`${system.apiUrl}/?adventure=${longId}`);
      await long.getByRole('textbox', { name: 'Action', exact: true }).waitFor();
      await long.locator('.story .entry').first().waitFor();
      const openMs = Date.now() - opened;
      const total = (await long.evaluate(
        "fetch('/v1/adventures/' + new URLSearchParams(location.search).get('adventure'), { headers: { authorization: 'Bearer ' + localStorage.getItem('chronicle.apiKey') } }).then((r) => r.json()).then((v) => v.total)",
      )) as number;
      let pages = 0;
      for (let i = 0; i < 5; i++) {
        await long.mouse.wheel(0, -20_000);
        const earlier = long.getByRole('button', { name: /^Show earlier/ });
        if (!(await earlier.count())) break;
        await earlier.click();
        await long.getByRole('button', { name: /^Show earlier/ }).waitFor();
        pages++;
      }
      for (let i = 0; i < 20; i++) {
        await long.mouse.wheel(0, 4_000);
        await long.waitForTimeout(30);
      }
      const shown = await long.locator('.story .entry').count();
      const longTasks = (await long.evaluate('window.__bench.longTasks')) as number[];
      const longest = longTasks.length ? Math.max(...longTasks) : 0;

      const paint = { ...summarize(paints), max: paints.length ? Math.max(...paints) : 0 };
      const verdict = (ok: boolean) => (ok ? 'meets' : '**misses**');
      return [
        '## Web client (headless Chromium, built API and context worker, fake model)',
        '',
        '| figure | measured | target | verdict |',
        '|---|---|---|---|',
        `| first load of \`/\`: JavaScript gzipped | ${(jsGzipBytes / 1024).toFixed(1)} KB | ≤ ${TARGET_JS_KB} KB | ${verdict(jsGzipBytes <= TARGET_JS_KB * 1024)} |`,
        `| streamed chunk on screen after it reached the page (${paints.length} chunks) | p50 ${paint.p50.toFixed(1)} ms, p99 ${paint.p99.toFixed(1)} ms, max ${paint.max.toFixed(1)} ms | ≤ ${TARGET_PAINT_MS} ms | ${verdict(paint.max <= TARGET_PAINT_MS)} |`,
        `| layout shift over the ${STREAMED_TURNS} streamed turns (cumulative layout shift, the story scrolled to its end) | ${layoutShift.toFixed(3)} | ≤ 0.1 ("good") | ${verdict(layoutShift <= 0.1)} |`,
        `| ${total.toLocaleString('en')}-action adventure: opened (${openMs} ms to the story), scrolled, ${pages} earlier pages loaded (${shown} actions on the page) | longest task ${longest.toFixed(0)} ms (${longTasks.length} tasks over 50 ms) | none over ${TARGET_LONG_TASK_MS} ms | ${verdict(longest <= TARGET_LONG_TASK_MS)} |`,
      ].join('\n');
    });
  } finally {
    await browser.close();
    await system.close();
  }
}
