import { randomUUID } from 'node:crypto';
import { AccountsRepository } from '@chronicle/accounts';
import { QueueName, QueueProducer } from '@chronicle/queue';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { turnIdFor } from '../../src/adventures/turn-id';
import { aScenario, startApiHarness, type ApiHarness } from '../api.harness';

// Turns belong to their adventure: the server derives every turn id from (adventure, client id),
// so one client id used in two users' adventures makes two turns, two streams, two jobs; and a
// client id is an idempotency key: the same body answers the original, another body is a 422.

describe('tenancy of turns', () => {
  let api: ApiHarness;
  let otherKey: string;

  beforeAll(async () => {
    api = await startApiHarness();
    const accounts = api.app.get(AccountsRepository);
    const other = await accounts.createUser({ name: 'other' });
    otherKey = (await accounts.createKey(other.id))!.key;
  });
  afterAll(() => api.close());

  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const newAdventure = async (key = api.apiKey) =>
    (await api.request('POST', '/v1/adventures', aScenario(), as(key))).body.id as string;
  const act = (id: string, body: Record<string, unknown>, key = api.apiKey, headers = {}) =>
    api.request('POST', `/v1/adventures/${id}/actions`, body, { ...as(key), ...headers });
  const job = (turnId: string) =>
    api.app.get(QueueProducer).queue(QueueName.Narrate).getJob(`narrate-${turnId}`);

  it('one client id in two users’ adventures starts two turns, with their own streams and jobs', async () => {
    const mine = await newAdventure();
    const theirs = await newAdventure(otherKey);
    const clientId = randomUUID();
    for (const type of ['continue', 'do'] as const) {
      const id = type === 'continue' ? clientId : randomUUID();
      const a = await act(mine, { type, text: 'look', id });
      const b = await act(theirs, { type, text: 'look', id }, otherKey);
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(a.body.turnId).toBe(turnIdFor(mine, id));
      expect(b.body.turnId).toBe(turnIdFor(theirs, id));
      expect(a.body.turnId).not.toBe(b.body.turnId);
      expect(a.body.turnId).not.toBe(id);
      // Ids only (and when the request arrived): each job names its own adventure and owner.
      const [jobA, jobB] = [await job(a.body.turnId), await job(b.body.turnId)];
      expect(jobA?.data).toEqual({
        adventureId: mine,
        turnId: a.body.turnId,
        userId: expect.any(String),
        requestId: expect.any(String),
        requestedAt: expect.any(Number),
      });
      expect(jobB?.data).toEqual({
        adventureId: theirs,
        turnId: b.body.turnId,
        userId: expect.any(String),
        requestId: expect.any(String),
        requestedAt: expect.any(Number),
      });
      expect(jobA?.data.userId).not.toBe(jobB?.data.userId);
      // The client's id names no stream and no job at all.
      expect(await job(id)).toBeUndefined();
      expect(await api.app.get(TurnStreamPublisher).entries(id)).toEqual([]);
      // The other user can neither see nor follow this turn, under either adventure.
      for (const path of [
        `/v1/adventures/${mine}/turns/${a.body.turnId}`,
        `/v1/adventures/${mine}/turns/${a.body.turnId}/stream`,
        `/v1/adventures/${theirs}/turns/${a.body.turnId}`,
        `/v1/adventures/${theirs}/turns/${a.body.turnId}/stream`,
      ]) {
        expect((await api.request('GET', path, undefined, as(otherKey))).status).toBe(404);
      }
      await api.request('POST', `/v1/adventures/${mine}/turns/${a.body.turnId}/cancel`);
      await api.request(
        'POST',
        `/v1/adventures/${theirs}/turns/${b.body.turnId}/cancel`,
        undefined,
        as(otherKey),
      );
    }
  });

  it('an id resent with the same body answers the original turn; with another body, 422 naming it', async () => {
    const id = await newAdventure();
    const actionId = randomUUID();
    const first = await act(id, { type: 'do', text: 'ring the bell', id: actionId });
    expect(first.status).toBe(202);
    const again = await act(id, { type: 'do', text: 'ring the bell', id: actionId });
    expect(again).toMatchObject({ status: 202, body: first.body });

    for (const body of [
      { type: 'do', text: 'ring it twice', id: actionId },
      { type: 'say', text: 'ring the bell', id: actionId },
      { type: 'continue', id: actionId },
    ]) {
      const conflict = await act(id, body);
      expect(conflict.status).toBe(422);
      expect(conflict.body.message).toContain(
        `id ${actionId} was already used for a different request`,
      );
    }
    const retryWithIt = await api.request('POST', `/v1/adventures/${id}/retry`, { id: actionId });
    expect(retryWithIt.status).toBe(422);

    // The Idempotency-Key header is the same key; a header and a body id that disagree are a 400.
    const byHeader = await act(id, { type: 'do', text: 'ring the bell' }, api.apiKey, {
      'idempotency-key': actionId,
    });
    expect(byHeader).toMatchObject({ status: 202, body: first.body });
    const disagree = await act(id, { type: 'do', text: 'x', id: randomUUID() }, api.apiKey, {
      'idempotency-key': actionId,
    });
    expect(disagree.status).toBe(400);
    expect(disagree.body.message).toMatch(/Idempotency-Key/);
    const notUuid = await act(id, { type: 'do', text: 'x' }, api.apiKey, {
      'idempotency-key': 'abc',
    });
    expect(notUuid).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/Idempotency-Key must be a UUID/) },
    });

    const log = await api.request('GET', `/v1/adventures/${id}/events`);
    expect(log.body.events.filter((e: { type: string }) => e.type === 'PlayerActed')).toHaveLength(
      1,
    );
  });
});
