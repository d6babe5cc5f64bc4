import {
  ConflictError,
  decideImport,
  IMPORTED_IN_FLIGHT_MESSAGE,
  ImportedEventRefusedError,
  initialState,
  type ImportAdventure,
  type ImportedEvent,
  type RecordedAdventureEvent,
} from './index';
import { AdventureHistory } from './testing';

/** An export of `history`'s log: each event with an id and the metadata it was recorded with. */
function exported(history: AdventureHistory): ImportAdventure {
  const events = history.events.map(
    ({ version, ...event }: RecordedAdventureEvent): ImportedEvent => ({
      ...event,
      id: `00000000-0000-4000-8000-${String(version).padStart(12, '0')}`,
      metadata: { actor: 'someone', importedFrom: { adventureId: 'source' } },
    }),
  );
  return { type: 'ImportAdventure', data: { sourceAdventureId: 'source', events } };
}

function refusal(run: () => unknown): ImportedEventRefusedError {
  try {
    run();
  } catch (error) {
    if (error instanceof ImportedEventRefusedError) return error;
    throw error;
  }
  throw new Error('the import was not refused');
}

describe('decideImport', () => {
  it('given no adventure yet, when a finished log is imported, then its events are appended as they are, ids and metadata kept', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'open the door');
    const command = exported(history);
    expect(decideImport(command, initialState())).toEqual(command.data.events);
  });

  it('given no adventure yet, when a log with a turn in flight is imported, then the turn is closed as failed, not queued', () => {
    const history = AdventureHistory.create();
    const { turnId } = history.act('do', 'knock');
    const events = decideImport(exported(history), initialState());
    expect(events.at(-1)).toEqual({
      type: 'NarrationFailed',
      data: { turnId, code: 'lost', message: IMPORTED_IN_FLIGHT_MESSAGE, attempts: 0 },
      metadata: { importedFrom: { adventureId: 'source' }, closedOnImport: true },
    });
    expect(events.at(-1)).not.toHaveProperty('id'); // the handler derives it from the key
  });

  it('given a room with members, a ban, an invite and a hand-over, when imported by someone, then the room goes back to the importer alone', () => {
    const now = '2026-12-06T03:00:00.000Z';
    const history = AdventureHistory.create();
    history.run({ type: 'CreateInvite', data: { code: 'c1', role: 'player', now } });
    for (const userId of ['u2', 'u3']) {
      history.run({
        type: 'JoinRoom',
        data: { code: 'c1', userId, character: { name: userId }, now },
      });
    }
    history.run({ type: 'KickMember', data: { userId: 'u3', ban: true } });
    history.run({ type: 'HandOverRoom', data: { userId: 'u2' } });
    const command = exported(history);
    // The edge names the importer as the owner in AdventureCreated (parseAdventureExport).
    (command.data.events[0].data as { ownerId: string }).ownerId = 'importer';
    const events = decideImport(command, initialState());
    expect(events.at(-1)).toEqual({
      type: 'RoomReset',
      data: { hostId: 'importer', droppedMembers: ['u2'], droppedInvites: 1, reason: 'import' },
      metadata: { roomResetOnImport: true },
    });
  });

  it('given an adventure that exists, when a log is imported into it, then it is a conflict', () => {
    const history = AdventureHistory.create();
    expect(() => decideImport(exported(history), history.state)).toThrow(ConflictError);
  });

  it('given a log that does not start with AdventureCreated, then it is refused at version 1', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'wait');
    const command = exported(history);
    command.data.events.shift();
    const refused = refusal(() => decideImport(command, initialState()));
    expect(refused).toMatchObject({ version: 1, kind: 'invalid' });
    expect(refused.problem).toMatch(/the first event must be AdventureCreated/);
  });

  it('given an event the projector refuses, then it is refused naming its version and why', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'wait');
    history.undo();
    const command = exported(history);
    const last = command.data.events.at(-1)!;
    command.data.events[command.data.events.length - 1] = {
      ...last,
      type: 'HeadMoved',
      data: { from: history.head, to: 'no-such-action' },
    } as ImportedEvent;
    const refused = refusal(() => decideImport(command, initialState()));
    expect(refused.version).toBe(command.data.events.length);
    expect(refused.problem).toMatch(/HeadMoved/);
  });
});
