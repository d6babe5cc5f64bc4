// The web client in a real headless Chromium, against the built API and context worker and the
// fake model: every flow of a player, through the accessible names the client promises
// (issue 14). Screenshots of the main screens land in docs/screenshots/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { AppSystem } from '@chronicle/testing';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { ChronicleClient } from './support/chronicle.client';
import { narration, type ScriptedReply } from './support/scripted-narrator';

jest.setTimeout(120_000);

const SHOTS = join(__dirname, '..', '..', 'docs', 'screenshots');
const CHUNK_DELAY_MS = 120;
// Page-side expressions as strings: this file is type-checked without the DOM's types.
const STORED_KEY = "localStorage.getItem('chronicle.apiKey')";
const PAGE_WIDTH = 'document.documentElement.scrollWidth';

let system: AppSystem;
let browser: TestBrowser;
let page: Page;
let take = 0;
const replies: ScriptedReply[] = [];

/** Each narration is six chunks 120 ms apart: slow enough to watch it stream, even on a busy machine. */
function slowReply() {
  const reply = narration(++take);
  replies.push(reply);
  return { text: reply.text, chunks: 6, delayMs: CHUNK_DELAY_MS };
}

beforeAll(async () => {
  // A lock long enough that a busy machine does not hand a running turn to a second attempt.
  system = await AppSystem.start({
    fake: { defaultReply: slowReply },
    env: { NARRATE_LOCK_MS: '30000' },
  });
  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.setDefaultTimeout(10_000);
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

const button = (name: string) => page.getByRole('button', { name, exact: true });
const tab = (name: string) => page.getByRole('tab', { name, exact: true });
const story = () => page.locator('.story');
const idle = () => page.getByRole('textbox', { name: 'Action', exact: true }).waitFor();

/**
 * The newest narration in the story, checked to be one the fake model wrote. Read from the
 * page, not from the model's last reply: on a loaded machine a job whose lock lapsed may call
 * the model twice, and only one of the two narrations is the log's.
 */
async function lastNarration(): Promise<string> {
  const text = ((await story().locator('.entry.ai .entry-text').last().textContent()) ?? '').trim();
  expect(replies.map((reply) => reply.prose)).toContain(text);
  return text;
}

/** The API dies at once (SIGKILL); the next start takes the same address. */
async function killApi(): Promise<void> {
  const api = system.process('api');
  api.kill('SIGKILL');
  await api.waitForExit(10_000);
}

async function waitForTurnToFinish(): Promise<void> {
  await page.locator('.live').waitFor({ state: 'detached', timeout: 30_000 });
}

/** Sends an action and returns the texts the streaming paragraph showed on the way. */
async function playTurn(send: () => Promise<void>): Promise<string[]> {
  const reply = replies.length;
  await send();
  const seen: string[] = [];
  const streaming = page.getByTestId('streaming');
  await streaming.waitFor({ timeout: 10_000 });
  // While the turn is in flight the action box is disabled.
  expect(await page.getByRole('textbox', { name: 'Action', exact: true }).isDisabled()).toBe(true);
  while (await streaming.count()) {
    const text = (await streaming.textContent().catch(() => null)) ?? '';
    if (text && seen.at(-1) !== text) seen.push(text);
    await page.waitForTimeout(15);
  }
  await waitForTurnToFinish();
  expect(replies.length).toBeGreaterThan(reply);
  return seen;
}

it('signs in with an API key, and out', async () => {
  await page.goto(`${system.apiUrl}/`);
  await page.getByLabel('API key', { exact: true }).fill('chr_wrong_key');
  await button('Sign in').click();
  await page.getByRole('alert').waitFor();
  expect(await page.getByRole('alert').textContent()).toMatch(/unknown or revoked/);
  await page.screenshot({ path: join(SHOTS, 'sign-in-desktop.png') });

  await page.getByLabel('API key', { exact: true }).fill(system.apiKey);
  await button('Sign in').click();
  await page.getByRole('heading', { name: 'Adventures' }).waitFor();
  expect(await page.evaluate(STORED_KEY)).toBe(system.apiKey);

  await button('Sign out').click();
  await button('Sign in').waitFor();
  expect(await page.evaluate(STORED_KEY)).toBeNull();

  // npm start's link: the key in the fragment, which the client keeps and removes from the URL.
  await page.goto(`${system.apiUrl}/#key=${encodeURIComponent(system.apiKey)}`);
  await page.getByRole('heading', { name: 'Adventures' }).waitFor();
  expect(page.url()).toBe(`${system.apiUrl}/`);
  await page.getByText('No adventures yet').waitFor();
});

it('serves the client with a strict CSP, long-cached hashed assets, and keeps the API paths', async () => {
  const index = await fetch(`${system.apiUrl}/?adventure=some-id`, {
    headers: { accept: 'text/html' },
  });
  expect(index.status).toBe(200);
  expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(index.headers.get('content-security-policy')).not.toContain('unsafe-inline');
  const html = await index.text();
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
  const script = await fetch(`${system.apiUrl}${asset}`);
  expect(script.headers.get('cache-control')).toContain('immutable');
  // The API's own paths keep their handlers.
  expect((await fetch(`${system.apiUrl}/v1/adventures`)).status).toBe(401);
  expect((await fetch(`${system.apiUrl}/health`)).status).toBe(200);
  expect(
    (await fetch(`${system.apiUrl}/v1/nope`, { headers: { accept: 'text/html' } })).status,
  ).not.toBe(200);
  // Only the built files are the client's: any other path is the API's to answer.
  const other = await fetch(`${system.apiUrl}/adventures/x`, {
    headers: { accept: 'text/html', authorization: `Bearer ${system.apiKey}` },
  });
  expect(other.status).toBe(404);
});

it('creates an adventure from a scenario, its placeholders asked as fields', async () => {
  await button('New adventure').click();
  await page.getByLabel('Title', { exact: true }).fill('The Lighthouse');
  await page
    .getByLabel('Opening', { exact: true })
    .fill('You are ${Name}, the keeper of the lighthouse at ${Place}.');
  await page.getByLabel('Name', { exact: true }).fill('Ada');
  await page.getByLabel('Place', { exact: true }).fill('Hollowmere');
  await page.getByLabel('Plot essentials', { exact: true }).fill('The lamp must never go out.');
  await page.screenshot({ path: join(SHOTS, 'new-adventure-desktop.png'), fullPage: true });
  await button('Create').click();
  await story().getByText('You are Ada, the keeper of the lighthouse at Hollowmere.').waitFor();
  expect(page.url()).toMatch(/\/\?adventure=[0-9a-f-]{36}$/);
});

it('does, says, writes story and continues, the narration seen streaming in', async () => {
  const action = page.getByRole('textbox', { name: 'Action', exact: true });
  // Do, sent with Enter; Shift+Enter is a new line.
  await action.fill('climb the stairs');
  await action.press('Shift+Enter');
  await action.type('slowly');
  expect(await action.inputValue()).toBe('climb the stairs\nslowly');
  const seen = await playTurn(() => action.press('Enter'));
  const full = await lastNarration();
  // Text arrived in pieces: some view showed only a beginning of the narration.
  expect(seen.some((text) => text.length > 0 && text.length < full.length)).toBe(true);
  await story().getByText(full).waitFor();
  await story()
    .getByText(/> You climb the stairs\s+slowly\./)
    .waitFor();

  await page.getByRole('radio', { name: 'Say', exact: true }).check();
  await action.fill('Hello, Mira?');
  await playTurn(() => button('Send').click());
  await story().getByText('> You say "Hello, Mira?"').waitFor();

  await page.getByRole('radio', { name: 'Story', exact: true }).check();
  await action.fill('A storm gathers over the bay.');
  await playTurn(() => button('Send').click());
  await story().getByText('A storm gathers over the bay.', { exact: true }).waitFor();

  const before = await lastNarration();
  await playTurn(() => button('Continue').click());
  expect(await lastNarration()).not.toBe(before);
  await page.getByRole('radio', { name: 'Do', exact: true }).check();
  await page.screenshot({ path: join(SHOTS, 'play-desktop.png'), fullPage: true });
});

it('retries and pages the takes ‹ 1/2 ›', async () => {
  const first = await lastNarration();
  await playTurn(() => button('Retry').click());
  const second = await lastNarration();
  expect(second).not.toBe(first);
  expect(await story().getByText(first).count()).toBe(0);
  await page.getByRole('group', { name: 'Takes' }).getByText('2/2').waitFor();
  await button('Previous take').click();
  await story().getByText(first).waitFor();
  await page.getByRole('group', { name: 'Takes' }).getByText('1/2').waitFor();
  await button('Next take').click();
  await story().getByText(second).waitFor();
});

it('undoes and redoes', async () => {
  const last = await lastNarration();
  await button('Undo').click();
  await story().getByText(last).waitFor({ state: 'detached' });
  await button('Redo').click();
  await story().getByText(last).waitFor();
});

it('edits an action in place and erases one', async () => {
  const entries = story().locator('.entry');
  const count = await entries.count();
  await button(`Edit action ${count}`).click();
  await page
    .getByLabel(`Text of action ${count}`, { exact: true })
    .fill('The lamp flickers, then holds.');
  await button('Save').click();
  await story().getByText('The lamp flickers, then holds.').waitFor();

  await button(`Erase action ${count}`).click();
  await story().getByText('The lamp flickers, then holds.').waitFor({ state: 'detached' });
  expect(await entries.count()).toBe(count - 1);
});

it('adds a story card and sees it fire in the Context panel', async () => {
  await tab('Story cards').click();
  await page.getByLabel('Name', { exact: true }).fill('Mira');
  await page.getByLabel('Keys', { exact: true }).fill('Mira');
  await page
    .getByLabel('Entry', { exact: true })
    .fill('Mira is the harbour master, stern and kind.');
  await button('Add card').click();
  await page
    .getByRole('list', { name: 'Story cards' })
    .getByText('Mira', { exact: true })
    .waitFor();

  // The next turn mentions the card's key: the last turn's report names the card and the key.
  await playTurn(async () => {
    await page.getByRole('textbox', { name: 'Action', exact: true }).fill('look for Mira');
    await button('Send').click();
  });
  await tab('Context').click();
  const cards = page.getByRole('list', { name: 'Cards in context' });
  await button('Last turn').click();
  await cards.getByText(/Mira\s+included — key “mira”/i).waitFor();
  await page
    .getByRole('img', { name: /of 16384 tokens/ })
    .first()
    .waitFor();

  // The dry run: the same report for the next turn, with the exact prompt it would send.
  await button('Dry run').click();
  await cards.getByText(/Mira\s+included — key “mira”/i).waitFor();
  const prompt =
    (await page.getByLabel('System prompt').textContent()) +
    '\n' +
    (await page.getByLabel('Story prompt').textContent());
  expect(prompt).toContain('You look for Mira.');
  expect(prompt).toContain('Mira is the harbour master, stern and kind.');
  await page.screenshot({ path: join(SHOTS, 'context-desktop.png'), fullPage: true });

  // With an action typed (not sent), the dry run is that action's turn: its text at the end.
  const actionBox = page.getByRole('textbox', { name: 'Action', exact: true });
  await actionBox.fill('ring the drowned bell twice');
  await button('Run again').click();
  await page.getByText('For the action being typed (do): ring the drowned bell twice').waitFor();
  expect(await page.getByLabel('Story prompt').textContent()).toContain(
    '> You ring the drowned bell twice.',
  );
  await actionBox.fill('');
});

it('shows the referee decisions and corrects the state with a form', async () => {
  await tab('State').click();
  const accepted = page.getByRole('list', { name: 'Accepted events' });
  await accepted.getByText(`enter id=chalk-mark-${take}`, { exact: false }).waitFor();
  await page.getByLabel('Correction', { exact: true }).selectOption('addEntity');
  await page.getByLabel('Entity id', { exact: true }).fill('mira');
  await page.getByLabel('Name of the entity', { exact: true }).fill('Mira');
  await page.getByLabel('Kind', { exact: true }).selectOption('character');
  await button('Apply correction').click();
  await page
    .getByRole('table', { name: 'Entities' })
    .getByRole('cell', { name: 'mira', exact: true })
    .waitFor();

  await page.getByLabel('Correction', { exact: true }).selectOption('setStatus');
  await page.getByLabel('Entity id', { exact: true }).fill('nobody-here');
  await page.getByLabel('Status', { exact: true }).fill('gone');
  await button('Apply correction').click();
  expect(await page.getByRole('alert').textContent()).toMatch(/nobody-here/);

  await accepted.getByRole('button', { name: 'Retcon' }).first().click();
  await accepted.getByText('(retconned)').first().waitFor();
  await page.screenshot({ path: join(SHOTS, 'state-desktop.png'), fullPage: true });
});

it('travels in time with the Version slider and branches from there', async () => {
  await tab('Timeline').click();
  const slider = page.getByRole('slider', { name: 'Version', exact: true });
  const latest = Number(await slider.getAttribute('max'));
  await page.getByRole('list', { name: 'Event log' }).getByText('AdventureCreated').waitFor();
  await slider.fill('1');
  const at = page.getByLabel('The adventure at version 1');
  await at.getByText('You are Ada, the keeper of the lighthouse at Hollowmere.').waitFor();
  expect(await at.getByText('climb the stairs').count()).toBe(0);
  await slider.fill(String(latest));
  await page.getByLabel(`The adventure at version ${latest}`).waitFor();
  await page.screenshot({ path: join(SHOTS, 'timeline-desktop.png'), fullPage: true });

  await slider.fill('1');
  await page.getByLabel('The adventure at version 1').waitFor();
  await button('Branch from here').click();
  await page.getByText('the next action starts a new branch').waitFor();
  expect(await story().getByText('climb the stairs').count()).toBe(0);
  await story().getByText('You are Ada, the keeper of the lighthouse at Hollowmere.').waitFor();
});

it('keeps memories: add, pin, edit, forget, and the summary', async () => {
  await tab('Memories').click();
  await page.getByText('No memories yet.').waitFor();
  await page.getByLabel('New memory', { exact: true }).fill('Ada fears the dark water.');
  await button('Add memory').click();
  const list = page.getByRole('list', { name: 'Memories' });
  await list.getByText('Ada fears the dark water.').waitFor();
  await list.getByRole('button', { name: 'Pin', exact: true }).click();
  await list.getByText('pinned', { exact: true }).waitFor();
  await list.getByRole('button', { name: 'Edit memory' }).click();
  await page.getByLabel('Memory text').fill('Ada fears the deep, dark water.');
  await button('Save memory').click();
  await list.getByText('Ada fears the deep, dark water.').waitFor();
  await list.getByRole('button', { name: 'Forget' }).click();
  await list.getByText('forgotten', { exact: true }).waitFor();

  await button('Edit summary').click();
  await page.getByLabel('Summary', { exact: true }).fill('Ada keeps the lamp alight.');
  await button('Save summary').click();
  await page.locator('.summary').getByText('Ada keeps the lamp alight.').waitFor();
});

it("shows a script's message and a failed script's notice as the turn streams, and after it", async () => {
  // An adventure of its own, on a page of its own: the scripts stay out of the other flows.
  const adventureId = await new ChronicleClient(system.apiUrl).createAdventure({
    title: 'The Tide Script',
    opening: 'The tide pools glitter below the lighthouse.',
    scripts: [
      // `message` comes from the API as the turn is accepted, before the narration
      // `stopped` (with its message) when the player holds their breath: no narration
      {
        name: 'Tide',
        input: `if (text.includes('hold your breath')) {
          state.message = 'You cannot hold it for long.';
          ({ text: null, stop: true });
        } else {
          state.message = 'The tide is turning.';
          ({ text });
        }`,
      },
      // `notice` comes from the worker after the narration, just before `done`
      { name: 'Broken', output: 'null.boom' },
    ],
  });
  // A slower narration than the others: time to see the message while it streams.
  system.fake.enqueue({ ...slowReply(), delayMs: 300 });
  const scripted = await browser.context.newPage();
  try {
    scripted.setDefaultTimeout(10_000);
    await scripted.goto(`${system.apiUrl}/?adventure=${adventureId}`);
    const action = scripted.getByRole('textbox', { name: 'Action', exact: true });
    await action.fill('wade into the pools');
    await action.press('Enter');
    const notes = scripted.getByRole('log', { name: 'Script notices' });
    // The message is on the screen while the narration is still streaming.
    await notes.getByText('The tide is turning.', { exact: true }).waitFor();
    expect(await scripted.getByTestId('streaming').count()).toBe(1);
    await scripted.locator('.live').waitFor({ state: 'detached', timeout: 30_000 });
    // The notice that came with the last frames stays with the message once the turn is in.
    await notes
      .getByText(
        'The script "Broken" failed in its output hook (it threw an error); the turn went on without it.',
        { exact: true },
      )
      .waitFor();
    expect(await notes.getByRole('listitem').allTextContents()).toEqual([
      'The tide is turning.',
      'The script "Broken" failed in its output hook (it threw an error); the turn went on without it.',
    ]);
    expect(await scripted.locator('.story .entry.ai').count()).toBe(1);

    // A turn the script stops ends at its `stopped` frame: the box is free again at once (not
    // after the reconnects a stream that never ends would get), and the stop's message, which
    // is also the script's message, shows once, the last turn's notes gone.
    await action.fill('hold your breath');
    await action.press('Enter');
    await notes.getByText('You cannot hold it for long.', { exact: true }).waitFor();
    await scripted.locator('.live').waitFor({ state: 'detached' });
    expect(await action.isDisabled()).toBe(false);
    expect(await notes.getByRole('listitem').allTextContents()).toEqual([
      'You cannot hold it for long.',
    ]);
    expect(await scripted.locator('.story .entry.ai').count()).toBe(1);
  } finally {
    await scripted.close();
  }
});

it('cancels a turn in flight and names a model failure', async () => {
  system.fake.enqueue({ ...slowReply(), delayMs: 1_000 });
  await page.getByRole('textbox', { name: 'Action', exact: true }).fill('wait');
  await button('Send').click();
  await page.getByTestId('streaming').waitFor();
  await button('Cancel').click();
  await page.getByRole('alert').getByText('The turn was cancelled.').waitFor({ timeout: 20_000 });

  for (let i = 0; i < 3; i++)
    system.fake.enqueue({ status: 500, errorMessage: 'upstream exploded' });
  await page.getByRole('textbox', { name: 'Action', exact: true }).fill('try again');
  await button('Send').click();
  await page
    .getByRole('alert')
    .getByText(/The narrator failed/)
    .waitFor({ timeout: 30_000 });
  await idle();
});

it('reconnects a stream that broke off without losing or doubling text', async () => {
  system.fake.enqueue({ ...slowReply(), chunks: 8, delayMs: 400 });
  const expected = replies.at(-1)!.prose;
  await page.getByRole('textbox', { name: 'Action', exact: true }).fill('listen to the sea');
  await button('Send').click();
  const streaming = page.getByTestId('streaming');
  // (polled from here: the page's CSP allows no string evaluation, as it should)
  while (((await streaming.textContent().catch(() => '')) ?? '').length <= 10) {
    await page.waitForTimeout(20);
  }
  // The API dies mid-turn (the worker goes on); a new one comes up on the same address.
  await killApi();
  await system.startApp('api');
  await page
    .getByText('Connection lost; reconnecting…')
    .waitFor({ state: 'attached', timeout: 10_000 })
    .catch(() => {});
  await streaming.waitFor({ state: 'detached', timeout: 30_000 });
  await story().getByText(expected).waitFor();
  const storyText = (await story().textContent()) ?? '';
  expect(storyText.split(expected).length - 1).toBe(1);
});

it('sends an action again under its id when the answer to it was lost, so it is played once', async () => {
  const adventureId = new URL(page.url()).searchParams.get('adventure')!;
  const actions = `**/v1/adventures/${adventureId}/actions`;
  // The first send reaches the server, which takes it, and the page is told 503 "may or may not
  // have been done" instead: an answer lost on the way back (a statement past its bound).
  let sends = 0;
  await page.route(actions, async (route) => {
    if (sends++ > 0) return route.continue();
    await route.fetch();
    await route.fulfill({
      status: 503,
      headers: { 'retry-after': '1', 'content-type': 'application/json' },
      body: JSON.stringify({
        statusCode: 503,
        message:
          'The database is unreachable right now (a statement took longer than its bound); what this request asked for may or may not have been done. Try again in a few seconds.',
      }),
    });
  });
  try {
    const action = page.getByRole('textbox', { name: 'Action', exact: true });
    await action.fill('ring the harbor bell');
    await button('Send').click();
    await page
      .getByRole('alert')
      .getByText(/may or may not have been done/)
      .waitFor();
    expect(await action.inputValue()).toBe('ring the harbor bell');
    await button('Send').click();
    await story().getByText('> You ring the harbor bell.').waitFor();
    await waitForTurnToFinish();
  } finally {
    await page.unroute(actions);
  }
  expect(sends).toBe(2);
  const events = await new ChronicleClient(system.apiUrl).events(adventureId);
  const rung = events.filter(
    (e) => e.type === 'PlayerActed' && /ring the harbor bell/.test(JSON.stringify(e.data)),
  );
  expect(rung).toHaveLength(1);
});

it('says how long to wait on a 429', async () => {
  await killApi();
  await system.startApp('api', { RATE_LIMIT_TURNS_PER_MINUTE: '1' });
  await page.reload();
  // The turns of this minute count already: at most one more is let through.
  const refused = page.getByRole('alert').getByText(/rate limit reached.*\(wait \d+ s\)/);
  for (let attempt = 0; attempt < 2 && !(await refused.count()); attempt++) {
    await page.getByRole('textbox', { name: 'Action', exact: true }).fill('once more');
    await button('Send').click();
    await refused.or(page.getByTestId('streaming')).first().waitFor();
    await waitForTurnToFinish();
  }
  await refused.waitFor();
  // Nothing typed is lost: the action stays in the box to send again.
  expect(await page.getByRole('textbox', { name: 'Action', exact: true }).inputValue()).toBe(
    'once more',
  );
});

it('exports an adventure to a file and imports it back', async () => {
  await page.getByRole('link', { name: 'Chronicle' }).click();
  await page.getByRole('heading', { name: 'Adventures' }).waitFor();
  const download = page.waitForEvent('download');
  await button('Export The Lighthouse').click();
  const file = await (await download).path();
  const text = readFileSync(file!, 'utf8');
  expect(text.split('\n')[1]).toContain('AdventureCreated');

  await page.getByLabel('Import adventure').setInputFiles(file!);
  await page
    .getByRole('status')
    .getByText(/Imported .*events/)
    .waitFor();
  await page.getByRole('link', { name: 'The Lighthouse' }).nth(1).waitFor();
  await page.screenshot({ path: join(SHOTS, 'adventures-desktop.png') });
});

it('fits a 360 px screen, light and dark', async () => {
  for (const scheme of ['light', 'dark'] as const) {
    const narrow = await browser.context.newPage();
    await narrow.setViewportSize({ width: 360, height: 740 });
    await narrow.emulateMedia({ colorScheme: scheme });
    await narrow.goto(`${system.apiUrl}/`);
    await narrow.getByRole('heading', { name: 'Adventures' }).waitFor();
    const width = await narrow.evaluate<number>(PAGE_WIDTH);
    expect(width).toBeLessThanOrEqual(360);
    await narrow.screenshot({ path: join(SHOTS, `adventures-360-${scheme}.png`) });
    await narrow.getByRole('link', { name: 'The Lighthouse' }).first().click();
    await narrow.getByRole('textbox', { name: 'Action', exact: true }).waitFor();
    for (const name of ['Context', 'State', 'Memories', 'Story cards', 'Timeline']) {
      await narrow.getByRole('tab', { name, exact: true }).waitFor();
    }
    for (const name of ['Send', 'Continue', 'Retry', 'Undo', 'Redo']) {
      await narrow.getByRole('button', { name, exact: true }).waitFor();
    }
    expect(await narrow.evaluate<number>(PAGE_WIDTH)).toBeLessThanOrEqual(360);
    await narrow.screenshot({ path: join(SHOTS, `play-360-${scheme}.png`), fullPage: true });
    await narrow.close();
  }
});
