// The web client's citations of recalled passages (issue 26), in a real headless Chromium
// against the built apps and the fake model: a fact the history window no longer holds comes
// back for an action about it, the Context panel lists it with its source action and why, and
// its control brings that action into the story view (loading the older story it lies in).
import type { Page } from 'playwright-core';
import { MEMORY_SYSTEM_PROMPT } from '@chronicle/memory';
import { AppSystem } from '@chronicle/testing';
import type { RecordedRequest } from '../support/fake-openai-server';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { ChronicleClient } from './support/chronicle.client';

jest.setTimeout(180_000);

const FACT = 'The keeper hid the silver key beneath the third stone of the chapel floor.';
const QUESTION = 'Where did the keeper hide the silver key?';
/** Turns after the fact: 2 actions each, so the fact lies before the story's first page (60). */
const FILLER_TURNS = 36;

let system: AppSystem;
let browser: TestBrowser;
let page: Page;
let adventureId: string;
let factId: string;
let client: ChronicleClient;

/** A narration long enough that a few turns fill the small context budget. */
function filler(): string {
  return (
    'Rain drums on the roof of the long hall while the lamps gutter and the wind worries the ' +
    'shutters. Somewhere below, the tide sucks at the pilings and a bell answers it, slow and ' +
    'patient, as the corridor bends away into the dark.'
  );
}

let memories = 0;
const isMemoryRequest = (r: RecordedRequest) =>
  r.body?.messages?.[0]?.content === MEMORY_SYSTEM_PROMPT;

beforeAll(async () => {
  system = await AppSystem.start({
    apps: ['api', 'context-worker', 'memory-worker'],
    fake: {
      defaultReply: (request) =>
        isMemoryRequest(request) ? { text: `Memory number ${++memories}.` } : { text: filler() },
    },
  });
  client = new ChronicleClient(system.apiUrl);
  adventureId = await client.createAdventure({
    title: 'The Chapel',
    opening: 'You are the sexton of a chapel by the sea.',
    settings: { model: 'fake-model', memoryBankEnabled: true, contextTokenBudget: 1500 },
  });
  await client.play(adventureId, 'story', FACT);
  for (let i = 0; i < FILLER_TURNS; i++) {
    await client.play(adventureId, 'do', `walk along corridor ${i}`);
  }
  const story = await client.request('GET', `/v1/adventures/${adventureId}?limit=240`);
  factId = story.body.actions.find((a: { text: string }) => a.text.includes('silver key')).id;

  browser = await launchBrowser();
  page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${system.apiUrl}/#key=${encodeURIComponent(system.apiKey)}`);
  await page.getByRole('heading', { name: 'Adventures' }).waitFor();
  await page.goto(`${system.apiUrl}/?adventure=${encodeURIComponent(adventureId)}`);
  await page.getByRole('heading', { name: 'The Chapel' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await system?.close();
});

const button = (name: string) => page.getByRole('button', { name, exact: true });
const actionBox = () => page.getByRole('textbox', { name: 'Action', exact: true });
const passages = () => page.getByRole('list', { name: 'Recalled passages' });
const factEntry = () => page.locator(`.story [data-action-id="${factId}"]`);

/** The fact's passage in the Context panel: its excerpt, its source action and why. */
async function factPassage() {
  const item = passages().getByRole('listitem').filter({ hasText: FACT });
  await item.waitFor();
  // The opening is action 1, the fact action 2.
  expect(await item.textContent()).toMatch(
    /story action, action 2 · #\d+ by words, .*fused 0\.\d{4}/,
  );
  return item;
}

/** The story view shows the fact's action, marked, in view and focused. */
async function expectFactShown() {
  await page.locator('.story .entry.jumped').waitFor();
  expect(await factEntry().getAttribute('class')).toContain('jumped');
  expect(await factEntry().getAttribute('aria-current')).toBe('location');
  expect(await factEntry().textContent()).toContain(FACT);
  expect(await factEntry().isVisible()).toBe(true);
  // In the viewport, and focused (the page's CSP allows no string evaluation: asked by selector).
  const box = (await factEntry().boundingBox())!;
  expect(box.y).toBeGreaterThanOrEqual(0);
  expect(box.y + box.height).toBeLessThanOrEqual(page.viewportSize()!.height);
  expect(await page.locator(`.story [data-action-id="${factId}"]:focus`).count()).toBe(1);
}

it('lists the passage the last turn recalled, with its source action and scores, and jumps to it', async () => {
  // The fact is older than the story's first page: not in the view yet.
  expect(await factEntry().count()).toBe(0);

  await actionBox().fill(QUESTION);
  await button('Send').click();
  // The fake narrator answers at once, so the streaming text may come and go unseen: the turn
  // is over when the story holds the action as written and nothing is live.
  await page
    .locator('.story > .entry.player', { hasText: 'Where did the keeper hide' })
    .waitFor({ timeout: 60_000 });
  await page.locator('.live').waitFor({ state: 'detached', timeout: 60_000 });

  await page.getByRole('tab', { name: 'Context', exact: true }).click();
  await button('Last turn').click();
  const item = await factPassage();
  // By keyboard: the control is a named button that Enter presses.
  await item.getByRole('button', { name: 'Go to action 2' }).focus();
  await page.keyboard.press('Enter');
  await expectFactShown();
});

it('shows the same in the dry run of an action being typed', async () => {
  await page.reload();
  await page.getByRole('heading', { name: 'The Chapel' }).waitFor();
  expect(await factEntry().count()).toBe(0);
  await actionBox().fill('Lift the third stone and take the silver key');
  await button('Dry run').click();
  await page.getByText(/^For the action being typed \(do\)/).waitFor();
  const item = await factPassage();
  await item.getByRole('button', { name: 'Go to action 2' }).click();
  await expectFactShown();
});

it('says so when a cited action is not in the story any more', async () => {
  const gone = await client.request('GET', `/v1/adventures/${adventureId}/actions/no-such-action`);
  expect(gone.status).toBe(404);
  expect(gone.body.message).toMatch(/not in the story at the head/);
});

it('expands a memory to its source actions and jumps to one in the story', async () => {
  // The memory worker writes memories from the story behind the turns: wait for the one
  // written from the fact's stretch of the story.
  let memory: { id: string; text: string; sourceActionIds: string[] } | undefined;
  for (let waited = 0; !memory && waited < 60_000; waited += 500) {
    const { body } = await client.request('GET', `/v1/adventures/${adventureId}/memories`);
    memory = body.memories.find((m: { sourceActionIds: string[] }) =>
      m.sourceActionIds.includes(factId),
    );
    if (!memory) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  expect(memory).toBeDefined();

  await page.reload();
  await page.getByRole('heading', { name: 'The Chapel' }).waitFor();
  expect(await factEntry().count()).toBe(0);
  await page.getByRole('tab', { name: 'Memories', exact: true }).click();
  const item = page
    .getByRole('list', { name: 'Memories' })
    .getByRole('listitem')
    .filter({ hasText: memory!.text });
  const expand = item.getByRole('button', { name: `Sources (${memory!.sourceActionIds.length})` });
  expect(await expand.getAttribute('aria-expanded')).toBe('false');
  await expand.click();
  expect(await expand.getAttribute('aria-expanded')).toBe('true');
  const source = item.getByRole('list', { name: 'Sources' }).getByRole('listitem').filter({
    hasText: FACT,
  });
  await source.getByRole('button', { name: /^Go to source \d+ \(story action\)$/ }).click();
  await expectFactShown();
});
