import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  describeError,
  exportAdventure,
  newId,
  type AdventureView,
  type TurnStarted,
} from './api';
import { ActionBox } from './action-box';
import { Inspect } from './inspect';
import { StoryView } from './story-view';
import { useStory, type Story } from './use-story';
import { useTurn, type LiveTurn, type Mode, type Turns } from './use-turn';

/** The play screen: the story and the action box, the Inspect panels beside them. */
export function Play(props: { id: string }) {
  const { id } = props;
  const base = `/v1/adventures/${encodeURIComponent(id)}`;
  const [mode, setMode] = useState<Mode>('do');
  const [input, setInput] = useState('');
  const status = useStatus();
  const story = useStory(base, status.setError);
  const turns = useTurn(story, status.setError);
  const moves = useMoves(base, story, turns, status);
  const storyEnd = useFollowedEnd(turns, moves.stickToEnd);

  useOpened(id, story, turns);

  const { view, loadError } = story;
  if (loadError && !view) {
    return (
      <p role="alert" class="error">
        Could not open this adventure: {loadError}
      </p>
    );
  }
  if (!view) return <p class="muted">Loading the adventure…</p>;

  const { turn } = turns;
  const inFlight = turn !== null;
  return (
    <div class="play">
      <section class="story-column" aria-label="Story">
        <StoryTitle view={view} onError={status.setError} />
        <StoryView
          base={base}
          story={story}
          turn={turn}
          notes={turns.notes}
          disabled={inFlight || moves.busy}
          command={moves.command}
          storyEnd={storyEnd}
        />
        <StatusLine {...status} />
        <ActionBox
          mode={mode}
          input={input}
          turn={turn}
          busy={moves.busy}
          canRetry={view.lastNarration !== null}
          canRedo={view.canRedo}
          onMode={setMode}
          onInput={setInput}
          send={(type) =>
            void moves.send(type, type === 'continue' ? '' : input).then((ok) => {
              if (ok && type !== 'continue') setInput('');
            })
          }
          moves={moves}
        />
      </section>
      <Inspect
        adventureId={id}
        view={view}
        busy={inFlight}
        draft={input.trim() === '' ? null : { type: mode, text: input }}
        onChanged={async () => void (await story.reload())}
        onBranched={async () => {
          await story.reload();
          status.setNotice(
            'You stand at that version now: the next action starts a new branch from there.',
          );
        }}
        jumpTo={(actionId) => void story.jumpTo(actionId)}
      />
    </div>
  );
}

function StoryTitle(props: { view: AdventureView; onError: (message: string) => void }) {
  const { view } = props;
  return (
    <div class="row spread">
      <h1 class="title">{view.title || 'Untitled'}</h1>
      <button
        type="button"
        class="secondary small"
        onClick={() => void exportAdventure(view).catch((e) => props.onError(describeError(e)))}
      >
        Export
      </button>
    </div>
  );
}

/** Opens the adventure, and follows a turn started elsewhere (another tab, a reload mid-turn). */
function useOpened(id: string, story: Story, turns: Turns) {
  useEffect(() => {
    void story.reload().then((fresh) => {
      const inFlight = fresh?.turnInFlight;
      if (inFlight) {
        const kind = inFlight.kind as LiveTurn['kind'];
        void turns.follow(inFlight.turnId, inFlight.stream, kind, null);
      }
    });
    return () => turns.stop();
  }, [id]);
}

function StatusLine(props: { error: string | null; notice: string | null }) {
  return (
    <>
      {props.notice && <p role="status">{props.notice}</p>}
      {props.error && (
        <p role="alert" class="error">
          {props.error}
        </p>
      )}
    </>
  );
}

/** The line under the story: the last failure (an alert) or notice (a status). */
function useStatus() {
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const clear = () => {
    setError(null);
    setNotice(null);
  };
  return { error, setError, notice, setNotice, clear };
}

/**
 * What the player does to the story: start a turn (an action, continue, retry) and follow it,
 * or run a change (undo, redo, edit, erase, a take) and reload. `busy` while one is being sent.
 */
export type Moves = ReturnType<typeof useMoves>;

function useMoves(base: string, story: Story, turns: Turns, status: ReturnType<typeof useStatus>) {
  const [busy, setBusy] = useState(false);
  const stickToEnd = useRef(true);
  // The action last sent without an answer that took it (a 503, no answer at all): sent again
  // unchanged it keeps its id, so a first send the server did take is not played twice.
  const unanswered = useRef<{ type: string; text: string; id: string } | null>(null);

  async function startTurn(
    start: () => Promise<TurnStarted>,
    kind: LiveTurn['kind'],
    player: LiveTurn['player'],
  ) {
    status.clear();
    stickToEnd.current = true;
    let started: TurnStarted;
    try {
      setBusy(true);
      started = await start();
    } catch (e) {
      status.setError(describeError(e));
      return false;
    } finally {
      setBusy(false);
    }
    void turns.follow(started.turnId, started.stream, kind, player);
    return true;
  }

  const send = async (type: Mode | 'continue', text: string) => {
    if (turns.turn || busy) return false;
    if (type !== 'continue' && !text.trim()) {
      status.setError('Write an action first (or press Continue).');
      return false;
    }
    const again = unanswered.current;
    const id = again && again.type === type && again.text === text ? again.id : newId();
    unanswered.current = { type, text, id };
    const ok = await startTurn(
      () =>
        api.post<TurnStarted>(
          `${base}/actions`,
          type === 'continue' ? { type, id } : { type, text, id },
        ),
      type === 'continue' ? 'continue' : 'action',
      type === 'continue' ? null : { type, text },
    );
    if (ok) unanswered.current = null;
    return ok;
  };

  const retry = () =>
    startTurn(() => api.post<TurnStarted>(`${base}/retry`, { id: newId() }), 'retry', null);

  const command = async (what: string, run: () => Promise<unknown>) => {
    status.clear();
    setBusy(true);
    try {
      await run();
      await story.reload();
    } catch (e) {
      status.setError(`${what}: ${describeError(e)}`);
    } finally {
      setBusy(false);
    }
  };

  const undo = () => command('Undo', () => api.post(`${base}/undo`));
  const redo = () => command('Redo', () => api.post(`${base}/redo`));
  const cancel = (turnId: string) =>
    api
      .post(`${base}/turns/${encodeURIComponent(turnId)}/cancel`)
      .catch((e) => status.setError(`Cancel: ${describeError(e)}`));

  return { busy, send, retry, undo, redo, cancel, command, stickToEnd };
}

/** Follows the end of the story while text streams, unless the reader has scrolled up. */
function useFollowedEnd(turns: Turns, stickToEnd: { current: boolean }) {
  const storyEnd = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onScroll = () => {
      const fromEnd = document.documentElement.scrollHeight - (scrollY + innerHeight);
      stickToEnd.current = fromEnd < 120;
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => removeEventListener('scroll', onScroll);
  }, []);
  useLayoutEffect(() => {
    if (stickToEnd.current && turns.turn) storyEnd.current?.scrollIntoView({ block: 'end' });
  }, [turns.turn?.text, turns.notes.length]);
  return storyEnd;
}
