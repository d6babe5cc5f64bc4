import { decide } from './adventure.decider';
import { ConflictError, NotFoundError, TurnInFlightError } from './adventure.errors';
import type { AdventureEvent } from './adventure.events';
import { plainProject } from './adventure.evolve';
import { project } from './adventure.projector';
import { storyPath } from './adventure.queries';
import { canonicalJson } from './adventure.queries';
import { NotYourTurnError, currentPlayerOf, roundWaitingFor } from './round.decider';
import type { AdventureSettings, TurnPolicy } from './adventure.events';
import { AdventureHistory, wordCountTokens } from './testing/adventure.factory';
import { roomHistory } from './testing/room.factory';

/** A room of the owner and two players under `policy`, joined through the room's own commands. */
function room(policy: TurnPolicy, settings: Partial<AdventureSettings> = {}): AdventureHistory {
  return roomHistory(['mira', 'tam'], { turnPolicy: policy, ...settings });
}

function send(
  history: AdventureHistory,
  actorId: string,
  text: string,
  id = history.nextId('action'),
) {
  return history.run({
    type: 'SubmitAction',
    data: { turnId: `turn-of-${id}`, inputType: 'do', text, actionId: id, actorId },
  });
}

function types(events: readonly AdventureEvent[]): string[] {
  return events.map((event) => event.type);
}

describe('round decider (turn policies of a room)', () => {
  describe('free', () => {
    it('given no turn in flight, when a player acts, then the turn starts and the action records its actor', () => {
      const history = room('free');
      const [acted] = send(history, 'mira', 'I open the door', 'a-1');
      expect(acted).toMatchObject({ type: 'PlayerActed', data: { actorId: 'mira' } });
      expect(history.state.turns.actors).toEqual({ 'a-1': 'mira' });
    });

    it('given a turn in flight, when others act, then their actions are held (one each) and the narration starts their turn', () => {
      const history = room('free');
      send(history, 'mira', 'I open the door', 'a-1');
      expect(types(send(history, 'tam', 'I light a torch', 'a-2'))).toEqual(['ActionHeld']);
      expect(types(send(history, 'owner-1', 'I wait', 'a-3'))).toEqual(['ActionHeld']);
      expect(() => send(history, 'tam', 'I light another', 'a-4')).toThrow(ConflictError);
      const held = history.state.turns.held;
      expect(held?.turnId).toBe('turn-of-a-2');

      history.narrate({ actionId: 'n-1' });

      const [, started] = history.events.slice(-2);
      expect(started).toMatchObject({
        type: 'PlayersActed',
        data: { turnId: 'turn-of-a-2', roundId: null, closedBy: 'held' },
      });
      expect(history.state.inFlight).toMatchObject({
        turnId: 'turn-of-a-2',
        actionId: 'a-3',
        actionIds: ['a-2', 'a-3'],
      });
      expect(storyPath(history.state).map((e) => e.id)).toEqual([
        'opening',
        'a-1',
        'n-1',
        'a-2',
        'a-3',
      ]);
      expect(history.state.turns.held).toBeNull();
    });

    it('given held actions, when the turn fails or is cancelled, then the held turn starts all the same', () => {
      const history = room('free');
      send(history, 'mira', 'I open the door', 'a-1');
      send(history, 'tam', 'I light a torch', 'a-2');
      history.cancel();
      expect(history.state.inFlight?.actionIds).toEqual(['a-2']);
      send(history, 'mira', 'I run', 'a-3');
      history.fail();
      expect(history.state.inFlight?.actionIds).toEqual(['a-3']);
    });

    it('given a turn in flight, when a player continues, then it is refused as in a one-player adventure', () => {
      const history = room('free');
      send(history, 'mira', 'I open the door', 'a-1');
      expect(() =>
        history.run({
          type: 'SubmitAction',
          data: { turnId: 't-c', inputType: 'continue', text: '', actionId: 'c', actorId: 'tam' },
        }),
      ).toThrow(TurnInFlightError);
    });
  });

  describe('round', () => {
    it('given an open round, when the last player submits, then the same decision closes it and starts its turn', () => {
      const history = room('round');
      expect(types(send(history, 'mira', 'I draw', 'a-1'))).toEqual(['ActionSubmitted']);
      expect(roundWaitingFor(history.state)).toEqual(['owner-1', 'tam']);
      history.run({ type: 'PassRound', data: { userId: 'owner-1' } });
      const last = send(history, 'tam', 'I hide', 'a-2');
      expect(types(last)).toEqual(['ActionSubmitted', 'PlayersActed']);
      expect(last[1]).toMatchObject({
        data: { turnId: 'turn-of-a-1', roundId: 'round-1', closedBy: 'all-in' },
      });
      expect(history.state.inFlight?.actionIds).toEqual(['a-1', 'a-2']);
      expect(history.state.turns.round.id).toBe('round-2');
      expect(history.state.turns.actors).toEqual({ 'a-1': 'mira', 'a-2': 'tam' });
    });

    it('given a submission, when the player replaces or withdraws it, then the round holds the newest or none', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      send(history, 'mira', 'I sheathe', 'a-2');
      expect(history.state.turns.round.submitted.map((a) => a.id)).toEqual(['a-2']);
      history.run({ type: 'WithdrawSubmission', data: { userId: 'mira' } });
      expect(history.state.turns.round.submitted).toEqual([]);
      expect(() => history.run({ type: 'WithdrawSubmission', data: { userId: 'mira' } })).toThrow(
        NotFoundError,
      );
    });

    it('given a round with a submission, when the host closes it, then its turn starts; a player may not close it', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      expect(() => history.run({ type: 'CloseRound', data: { userId: 'mira' } })).toThrow(
        ConflictError,
      );
      const closed = history.run({ type: 'CloseRound', data: { userId: 'owner-1' } });
      expect(closed[0]).toMatchObject({ type: 'PlayersActed', data: { closedBy: 'host' } });
    });

    it('given the round timer of an older round, when it fires, then nothing changes (stale timers are harmless)', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      expect(
        decide(
          { type: 'FireTurnTimer', data: { timer: 'round', roundId: 'round-9' } },
          history.state,
          wordCountTokens,
        ),
      ).toEqual([]);
      const fired = history.run({
        type: 'FireTurnTimer',
        data: { timer: 'round', roundId: 'round-1' },
      });
      expect(fired[0]).toMatchObject({ type: 'PlayersActed', data: { closedBy: 'timer' } });
    });

    it('given the idle timeout, when it fires, then the players not in are away and the round closes without them', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      const fired = history.run({
        type: 'FireTurnTimer',
        data: { timer: 'idle', roundId: 'round-1' },
      });
      expect(types(fired)).toEqual(['PlayerMarkedAway', 'PlayerMarkedAway', 'PlayersActed']);
      expect(history.state.turns.away).toEqual(['owner-1', 'tam']);
      history.narrate();
      // Back when they act again.
      send(history, 'tam', 'I wake', 'a-2');
      expect(history.state.turns.away).toEqual(['owner-1']);
    });

    it('given a turn in flight, when every player is in, then the round closes when that turn ends', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      history.run({ type: 'CloseRound', data: { userId: 'owner-1' } });
      send(history, 'mira', 'I strike', 'a-2');
      send(history, 'tam', 'I duck', 'a-3');
      expect(types(history.run({ type: 'PassRound', data: { userId: 'owner-1' } }))).toEqual([
        'PlayerPassed',
      ]);
      history.narrate({ actionId: 'n-1' });
      expect(history.state.inFlight?.actionIds).toEqual(['a-2', 'a-3']);
    });

    it('given a round closed by its timer while a turn is narrated, then it closes when the turn ends', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      history.run({ type: 'CloseRound', data: { userId: 'owner-1' } });
      send(history, 'tam', 'I duck', 'a-2');
      expect(
        types(history.run({ type: 'FireTurnTimer', data: { timer: 'round', roundId: 'round-2' } })),
      ).toEqual(['RoundCloseDue']);
      history.narrate();
      expect(history.state.inFlight?.actionIds).toEqual(['a-2']);
    });

    it('given a narrated round, when the host retries, then the retry answers every action; undo hides them all', () => {
      const history = room('round');
      send(history, 'mira', 'I draw', 'a-1');
      history.run({ type: 'PassRound', data: { userId: 'owner-1' } });
      send(history, 'tam', 'I hide', 'a-2');
      history.narrate({ actionId: 'n-1' });
      history.requestRetry();
      expect(history.state.inFlight?.actionIds).toEqual(['a-1', 'a-2']);
      history.narrate({ actionId: 'n-2' });
      expect(storyPath(history.state).map((e) => e.id)).toEqual(['opening', 'a-1', 'a-2', 'n-2']);
      history.undo();
      expect(storyPath(history.state).map((e) => e.id)).toEqual(['opening']);
    });
  });

  describe('hot-seat', () => {
    it("given the seat is the host's, when another player acts, then a 409 names whose turn it is", () => {
      const history = room('hot-seat');
      expect(currentPlayerOf(history.state)).toBe('owner-1');
      let caught: unknown;
      try {
        send(history, 'mira', 'I jump');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(NotYourTurnError);
      expect((caught as NotYourTurnError).currentPlayer).toBe('owner-1');
      send(history, 'owner-1', 'I look');
      history.narrate();
      expect(currentPlayerOf(history.state)).toBe('mira');
    });

    it('given an idle seat, when its timer fires, then the player is skipped; a stale seat timer changes nothing', () => {
      const history = room('hot-seat');
      const since = history.state.turns.seatSince;
      const stale = {
        type: 'FireTurnTimer',
        data: { timer: 'seat', userId: 'owner-1', since: since + 5 },
      } as const;
      expect(decide(stale, history.state, wordCountTokens)).toEqual([]);
      history.run({ type: 'FireTurnTimer', data: { timer: 'seat', userId: 'owner-1', since } });
      expect(currentPlayerOf(history.state)).toBe('mira');
    });
  });

  it('given a one-player adventure, when the owner acts with an actor id, then the event is as it always was', () => {
    const history = AdventureHistory.create();
    const [acted] = history.run({
      type: 'SubmitAction',
      data: { turnId: 't-1', inputType: 'do', text: 'I wait', actionId: 'a-1', actorId: 'owner-1' },
    });
    expect(acted.data).not.toHaveProperty('actorId');
    expect(() => history.act('do', 'again')).toThrow(TurnInFlightError);
  });

  it('given a played room, then both folds agree on it', () => {
    const history = room('round');
    send(history, 'mira', 'I draw', 'a-1');
    history.run({ type: 'PassRound', data: { userId: 'owner-1' } });
    send(history, 'tam', 'I hide', 'a-2');
    history.narrate();
    const fast = project(history.events);
    const plain = plainProject(history.events);
    expect(canonicalJson(plain.turns)).toBe(canonicalJson(fast.turns));
    expect(canonicalJson(plain.path)).toBe(canonicalJson(fast.path));
  });

  it('given a round that waits only for a player who then leaves, then it closes in the leave', () => {
    const history = room('round');
    send(history, 'mira', 'I draw', 'a-1');
    history.run({ type: 'PassRound', data: { userId: 'owner-1' } });
    const left = history.run({ type: 'LeaveRoom', data: { userId: 'tam' } });
    expect(types(left)).toEqual(['MemberLeft', 'PlayersActed']);
  });

  it('given a room, when a player acts, then the action is written about their character', () => {
    const history = room('free');
    const [acted] = send(history, 'mira', 'I draw my sword', 'a-1');
    expect(acted).toMatchObject({ data: { action: { text: '> Mira draws her sword.' } } });
  });
});
