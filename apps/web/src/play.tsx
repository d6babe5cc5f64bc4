import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  authHeaders,
  describeError,
  errorFrom,
  exportAdventure,
  newId,
  type ActionView,
  type AdventureView,
  type TurnStarted,
} from './api';
import { Inspect } from './inspect';
import { followStream } from './sse';

type Mode = 'do' | 'say' | 'story';
const MODES: Array<{ mode: Mode; label: string; hint: string }> = [
  { mode: 'do', label: 'Do', hint: 'What do you do?' },
  { mode: 'say', label: 'Say', hint: 'What do you say?' },
  { mode: 'story', label: 'Story', hint: 'Write what happens next.' },
];
const EARLIER_PAGE = 100;

/** The turn being narrated right now, as the stream has delivered it so far. */
interface LiveTurn {
  turnId: string;
  kind: 'action' | 'continue' | 'retry';
  player: { type: Mode; text: string } | null;
  text: string;
  reconnecting: boolean;
}

/**
 * What the scripts told the player during the latest turn: a `notice` (a script failed, or its
 * context change was discarded), a script's `message`, or the message of a script that stopped
 * the turn. Kept after the turn ends, until the next one starts: a notice that comes with the
 * last frame would otherwise vanish with the live text before anyone could read it.
 */
interface TurnNote {
  kind: 'notice' | 'message' | 'stopped';
  text: string;
}

export function Play(props: { id: string }) {
  const { id } = props;
  const base = `/v1/adventures/${encodeURIComponent(id)}`;
  const [view, setView] = useState<AdventureView | null>(null);
  const [earlier, setEarlier] = useState<ActionView[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [turn, setTurn] = useState<LiveTurn | null>(null);
  const [notes, setNotes] = useState<TurnNote[]>([]);
  const [mode, setMode] = useState<Mode>('do');
  const [input, setInput] = useState('');
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const following = useRef<AbortController | null>(null);
  const storyEnd = useRef<HTMLDivElement>(null);
  const stickToEnd = useRef(true);
  // The action last sent without an answer that took it (a 503, no answer at all): sent again
  // unchanged it keeps its id, so a first send the server did take is not played twice.
  const unanswered = useRef<{ type: string; text: string; id: string } | null>(null);

  const fetchView = () => api.get<AdventureView>(base);

  const reload = async () => {
    try {
      const fresh = await fetchView();
      setView(fresh);
      setEarlier([]);
      setLoadError(null);
      return fresh;
    } catch (e) {
      setLoadError(describeError(e));
      return null;
    }
  };

  useEffect(() => {
    void reload().then((fresh) => {
      // A turn started elsewhere (another tab, a reload mid-turn): follow it here too.
      const inFlight = fresh?.turnInFlight;
      if (inFlight)
        void follow(inFlight.turnId, inFlight.stream, inFlight.kind as LiveTurn['kind'], null);
    });
    return () => following.current?.abort();
  }, [id]);

  // Follow the end of the story while text streams, unless the reader has scrolled up.
  useEffect(() => {
    const onScroll = () => {
      const fromEnd = document.documentElement.scrollHeight - (scrollY + innerHeight);
      stickToEnd.current = fromEnd < 120;
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => removeEventListener('scroll', onScroll);
  }, []);
  useLayoutEffect(() => {
    if (stickToEnd.current && turn) storyEnd.current?.scrollIntoView({ block: 'end' });
  }, [turn?.text, notes.length]);

  async function follow(
    turnId: string,
    stream: string,
    kind: LiveTurn['kind'],
    player: LiveTurn['player'],
  ) {
    following.current?.abort();
    const controller = new AbortController();
    following.current = controller;
    setTurn({ turnId, kind, player, text: '', reconnecting: false });
    setNotes([]);
    let failure: string | null = null;
    try {
      const last = await followStream({
        url: stream,
        headers: authHeaders(),
        signal: controller.signal,
        onRefused: errorFrom,
        onReconnect: () => setTurn((t) => t && { ...t, reconnecting: true }),
        onFrame: (frame) => {
          if (frame.event === 'player') {
            // The action as the server wrote it into the story ("> You climb the stairs.").
            const written = frame.data.action?.text;
            if (written)
              setTurn((t) => t && t.player && { ...t, player: { ...t.player, text: written } });
          } else if (frame.event === 'chunk') {
            const { text } = frame.data;
            setTurn((t) => t && { ...t, text: t.text + text, reconnecting: false });
          } else if (frame.event === 'reset') {
            setTurn((t) => t && { ...t, text: '', reconnecting: false });
          } else if (frame.event === 'notice' || frame.event === 'message') {
            // This client plays as the adventure's one player, so a message's `visibleTo`
            // (AI Dungeon's multiplayer names) names no one else who could be left out.
            const note = { kind: frame.event, text: frame.data.text };
            setNotes((n) => [...n, note]);
          }
        },
      });
      if (last?.event === 'error') {
        failure = last.data.cancelled
          ? 'The turn was cancelled.'
          : `The narrator failed: ${last.data.message ?? 'no reason given'}. Retry or try again.`;
      } else if (last?.event === 'stopped') {
        // The stop's message is mostly the script's `state.message`, already shown as it came.
        const { message } = last.data;
        setNotes((n) =>
          n.some((note) => note.kind === 'message' && note.text === message)
            ? n
            : [...n, { kind: 'stopped', text: message || 'A script stopped the turn.' }],
        );
      }
    } catch (e) {
      failure = describeError(e);
    }
    if (controller.signal.aborted) return;
    // The story as the log now has it replaces the streamed text in one render: no jump.
    const fresh = await fetchView().catch(() => null);
    if (fresh) {
      setView(fresh);
      setEarlier([]);
    }
    setTurn(null);
    following.current = null;
    if (failure) setError(failure);
  }

  async function startTurn(
    start: () => Promise<TurnStarted>,
    kind: LiveTurn['kind'],
    player: LiveTurn['player'],
  ) {
    setError(null);
    setNotice(null);
    stickToEnd.current = true;
    let started: TurnStarted;
    try {
      setBusy(true);
      started = await start();
    } catch (e) {
      setError(describeError(e));
      return false;
    } finally {
      setBusy(false);
    }
    void follow(started.turnId, started.stream, kind, player);
    return true;
  }

  const send = async (type: Mode | 'continue') => {
    if (turn || busy) return;
    if (type !== 'continue' && !input.trim()) {
      setError('Write an action first (or press Continue).');
      return;
    }
    const text = type === 'continue' ? '' : input;
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
    if (ok && type !== 'continue') setInput('');
  };

  const command = async (what: string, run: () => Promise<unknown>) => {
    setError(null);
    setNotice(null);
    setBusy(true);
    try {
      await run();
      await reload();
    } catch (e) {
      setError(`${what}: ${describeError(e)}`);
    } finally {
      setBusy(false);
    }
  };

  const loadEarlier = async () => {
    const first = earlier[0] ?? view?.actions[0];
    if (!first) return;
    setLoadingEarlier(true);
    try {
      const page = await api.get<AdventureView>(
        `${base}?before=${encodeURIComponent(first.id)}&limit=${EARLIER_PAGE}`,
      );
      setEarlier((e) => [...page.actions, ...e]);
      setView((v) => v && { ...v, more: page.more });
    } catch (e) {
      setError(describeError(e));
    } finally {
      setLoadingEarlier(false);
    }
  };

  if (loadError && !view) {
    return (
      <p role="alert" class="error">
        Could not open this adventure: {loadError}
      </p>
    );
  }
  if (!view) return <p class="muted">Loading the adventure…</p>;

  const inFlight = turn !== null;
  const actions = [...earlier, ...view.actions];
  const last = view.lastNarration;
  const takeIndex = last ? last.takes.indexOf(last.actionId) : -1;
  const hidden = turn?.kind === 'retry' && last ? last.actionId : null;
  const moreBefore = view.more;

  return (
    <div class="play">
      <section class="story-column" aria-label="Story">
        <div class="row spread">
          <h1 class="title">{view.title || 'Untitled'}</h1>
          <button
            type="button"
            class="secondary small"
            onClick={() => void exportAdventure(view).catch((e) => setError(describeError(e)))}
          >
            Export
          </button>
        </div>
        <div class="story" aria-live="off">
          {moreBefore && (
            <button
              type="button"
              class="secondary small earlier"
              disabled={loadingEarlier}
              onClick={() => void loadEarlier()}
            >
              {loadingEarlier ? 'Loading…' : `Show earlier (${view.total - actions.length} more)`}
            </button>
          )}
          {actions.length === 0 && <p class="empty">The story is empty.</p>}
          {actions.map((action, index) =>
            action.id === hidden ? null : (
              <StoryEntry
                key={action.id}
                action={action}
                number={view.total - actions.length + index + 1}
                editing={editing?.id === action.id ? editing.text : null}
                disabled={inFlight || busy}
                onEdit={() => setEditing({ id: action.id, text: action.text })}
                onEditText={(text) => setEditing({ id: action.id, text })}
                onCancelEdit={() => setEditing(null)}
                onSave={() =>
                  void command('Edit', async () => {
                    await api.patch(`${base}/actions/${encodeURIComponent(action.id)}`, {
                      text: editing?.text ?? '',
                    });
                    setEditing(null);
                  })
                }
                onErase={() =>
                  void command('Erase', () =>
                    api.del(`${base}/actions/${encodeURIComponent(action.id)}`),
                  )
                }
                pager={
                  last && action.id === last.actionId && last.takes.length > 1 ? (
                    <div class="pager" role="group" aria-label="Takes">
                      <button
                        type="button"
                        class="ghost small"
                        aria-label="Previous take"
                        disabled={inFlight || busy || takeIndex <= 0}
                        onClick={() =>
                          void command('Select take', () =>
                            api.put(`${base}/head`, { actionId: last.takes[takeIndex - 1] }),
                          )
                        }
                      >
                        ‹
                      </button>
                      <span aria-label="Take">
                        {takeIndex + 1}/{last.takes.length}
                      </span>
                      <button
                        type="button"
                        class="ghost small"
                        aria-label="Next take"
                        disabled={inFlight || busy || takeIndex >= last.takes.length - 1}
                        onClick={() =>
                          void command('Select take', () =>
                            api.put(`${base}/head`, { actionId: last.takes[takeIndex + 1] }),
                          )
                        }
                      >
                        ›
                      </button>
                    </div>
                  ) : null
                }
              />
            ),
          )}
          {turn && (
            <div class="live" aria-busy="true">
              {turn.player && (
                <p class={`entry player ${turn.player.type}`}>
                  <span class="entry-text">{turn.player.text}</span>
                </p>
              )}
              <p class="entry ai streaming" data-testid="streaming">
                <span class="entry-text">{turn.text}</span>
                <span class="cursor" aria-hidden="true" />
              </p>
            </div>
          )}
          {notes.length > 0 && (
            // A log region of its own: the story is aria-live="off" (streamed text would be
            // read out word by word), but a script's notice should be announced as it comes.
            <ul class="notes" role="log" aria-label="Script notices">
              {notes.map((note, index) => (
                <li key={index} class={`note ${note.kind}`}>
                  {note.text}
                </li>
              ))}
            </ul>
          )}
          <div ref={storyEnd} />
        </div>
        {notice && <p role="status">{notice}</p>}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <form
          class="action-box"
          onSubmit={(e) => {
            e.preventDefault();
            void send(mode);
          }}
        >
          <div class="modes" role="radiogroup" aria-label="Mode">
            {MODES.map((m) => (
              <label key={m.mode} class={`mode ${mode === m.mode ? 'on' : ''}`}>
                <input
                  type="radio"
                  name="mode"
                  value={m.mode}
                  checked={mode === m.mode}
                  disabled={inFlight}
                  onChange={() => setMode(m.mode)}
                />
                {m.label}
              </label>
            ))}
          </div>
          <textarea
            aria-label="Action"
            rows={2}
            value={input}
            disabled={inFlight}
            placeholder={MODES.find((m) => m.mode === mode)?.hint}
            onInput={(e) => setInput(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void send(mode);
              }
            }}
          />
          <div class="row wrap buttons">
            <button type="submit" disabled={inFlight || busy}>
              Send
            </button>
            <button
              type="button"
              class="secondary"
              disabled={inFlight || busy}
              onClick={() => void send('continue')}
            >
              Continue
            </button>
            <button
              type="button"
              class="secondary"
              disabled={inFlight || busy || !last}
              onClick={() =>
                void startTurn(
                  () => api.post<TurnStarted>(`${base}/retry`, { id: newId() }),
                  'retry',
                  null,
                )
              }
            >
              Retry
            </button>
            <button
              type="button"
              class="secondary"
              disabled={inFlight || busy}
              onClick={() => void command('Undo', () => api.post(`${base}/undo`))}
            >
              Undo
            </button>
            <button
              type="button"
              class="secondary"
              disabled={inFlight || busy || !view.canRedo}
              onClick={() => void command('Redo', () => api.post(`${base}/redo`))}
            >
              Redo
            </button>
            {turn && (
              <span class="muted small" role="status">
                {turn.reconnecting ? 'Connection lost; reconnecting…' : 'The narrator is writing…'}
              </span>
            )}
            {turn && (
              <button
                type="button"
                class="danger"
                onClick={() =>
                  void api
                    .post(`${base}/turns/${encodeURIComponent(turn.turnId)}/cancel`)
                    .catch((e) => setError(`Cancel: ${describeError(e)}`))
                }
              >
                Cancel
              </button>
            )}
          </div>
        </form>
      </section>
      <Inspect
        adventureId={id}
        view={view}
        busy={inFlight}
        draft={input.trim() === '' ? null : { type: mode, text: input }}
        onChanged={async () => void (await reload())}
        onBranched={async () => {
          await reload();
          setNotice(
            'You stand at that version now: the next action starts a new branch from there.',
          );
        }}
      />
    </div>
  );
}

function StoryEntry(props: {
  action: ActionView;
  number: number;
  editing: string | null;
  disabled: boolean;
  pager: preact.ComponentChildren;
  onEdit: () => void;
  onEditText: (text: string) => void;
  onCancelEdit: () => void;
  onSave: () => void;
  onErase: () => void;
}) {
  const { action } = props;
  const isPlayer = action.type === 'do' || action.type === 'say' || action.type === 'story';
  if (props.editing !== null) {
    return (
      <div class="entry editing">
        <textarea
          aria-label={`Text of action ${props.number}`}
          rows={Math.min(12, Math.max(3, Math.ceil(props.editing.length / 60)))}
          value={props.editing}
          onInput={(e) => props.onEditText(e.currentTarget.value)}
        />
        <div class="row">
          <button type="button" class="small" onClick={props.onSave}>
            Save
          </button>
          <button type="button" class="secondary small" onClick={props.onCancelEdit}>
            Cancel edit
          </button>
        </div>
      </div>
    );
  }
  return (
    <div
      class={`entry ${isPlayer ? `player ${action.type}` : action.type}`}
      data-action-id={action.id}
    >
      <span class="entry-text">{action.text}</span>
      <span class="entry-tools">
        {props.pager}
        <button
          type="button"
          class="ghost small"
          aria-label={`Edit action ${props.number}`}
          disabled={props.disabled}
          onClick={props.onEdit}
        >
          ✎
        </button>
        {action.type !== 'start' && (
          <button
            type="button"
            class="ghost small"
            aria-label={`Erase action ${props.number}`}
            disabled={props.disabled}
            onClick={props.onErase}
          >
            ×
          </button>
        )}
      </span>
    </div>
  );
}
