// The story as the player reads it: the loaded actions (each editable and erasable), the takes
// pager on the newest narration, the turn streaming in and the scripts' notes.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, type ActionView } from './api';
import type { Story } from './use-story';
import type { LiveTurn, TurnNote } from './use-turn';

export interface StoryViewProps {
  base: string;
  story: Story;
  turn: LiveTurn | null;
  notes: TurnNote[];
  /** A turn is in flight or a change is being sent: the story's tools wait. */
  disabled: boolean;
  /** Runs a change to the story, then reloads it; `what` names it in a failure. */
  command: (what: string, run: () => Promise<unknown>) => Promise<void>;
  storyEnd: preact.RefObject<HTMLDivElement>;
}

export function StoryView(props: StoryViewProps) {
  const { base, story, turn, notes } = props;
  const view = story.view!;
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const container = useRef<HTMLDivElement>(null);
  const actions = story.actions;
  const last = view.lastNarration;
  const hidden = turn?.kind === 'retry' && last ? last.actionId : null;
  const action = (id: string) => `${base}/actions/${encodeURIComponent(id)}`;

  // A jump from a citation: the action is loaded by now; bring it into view and move the focus
  // to it, so a keyboard or screen reader user lands where a sighted one looks.
  useLayoutEffect(() => {
    if (!story.jumped) return;
    const target = container.current?.querySelector<HTMLElement>(
      `[data-action-id="${CSS.escape(story.jumped.id)}"]`,
    );
    target?.scrollIntoView({ block: 'center' });
    target?.focus({ preventScroll: true });
  }, [story.jumped]);

  return (
    <div class="story" aria-live="off" ref={container}>
      {view.more && (
        <button
          type="button"
          class="secondary small earlier"
          disabled={story.loadingEarlier}
          onClick={() => void story.loadEarlier()}
        >
          {story.loadingEarlier ? 'Loading…' : `Show earlier (${view.total - actions.length} more)`}
        </button>
      )}
      {actions.length === 0 && <p class="empty">The story is empty.</p>}
      {actions.map((entry, index) =>
        entry.id === hidden ? null : (
          <StoryEntry
            key={entry.id}
            action={entry}
            number={view.total - actions.length + index + 1}
            highlighted={story.jumped?.id === entry.id}
            editing={editing?.id === entry.id ? editing.text : null}
            disabled={props.disabled}
            onEdit={() => setEditing({ id: entry.id, text: entry.text })}
            onEditText={(text) => setEditing({ id: entry.id, text })}
            onCancelEdit={() => setEditing(null)}
            onSave={() =>
              void props.command('Edit', async () => {
                await api.patch(action(entry.id), { text: editing?.text ?? '' });
                setEditing(null);
              })
            }
            onErase={() => void props.command('Erase', () => api.del(action(entry.id)))}
            pager={
              last && entry.id === last.actionId && last.takes.length > 1 ? (
                <TakesPager
                  takes={last.takes}
                  current={last.actionId}
                  disabled={props.disabled}
                  select={(actionId) =>
                    void props.command('Select take', () => api.put(`${base}/head`, { actionId }))
                  }
                />
              ) : null
            }
          />
        ),
      )}
      <LiveTurnView turn={turn} notes={notes} />
      <div ref={props.storyEnd} />
    </div>
  );
}

/** The turn streaming in, and what the scripts said during the latest turn. */
function LiveTurnView({ turn, notes }: { turn: LiveTurn | null; notes: TurnNote[] }) {
  return (
    <>
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
    </>
  );
}

/** ‹ 2/3 ›: the takes of the newest turn, one per retry; choosing one moves the head to it. */
function TakesPager(props: {
  takes: string[];
  current: string;
  disabled: boolean;
  select: (actionId: string) => void;
}) {
  const { takes } = props;
  const at = takes.indexOf(props.current);
  return (
    <div class="pager" role="group" aria-label="Takes">
      <button
        type="button"
        class="ghost small"
        aria-label="Previous take"
        disabled={props.disabled || at <= 0}
        onClick={() => props.select(takes[at - 1])}
      >
        ‹
      </button>
      <span aria-label="Take">
        {at + 1}/{takes.length}
      </span>
      <button
        type="button"
        class="ghost small"
        aria-label="Next take"
        disabled={props.disabled || at >= takes.length - 1}
        onClick={() => props.select(takes[at + 1])}
      >
        ›
      </button>
    </div>
  );
}

function StoryEntry(props: {
  action: ActionView;
  number: number;
  /** The action a citation jumped to: marked, and focusable so the focus can land on it. */
  highlighted: boolean;
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
      class={`entry ${isPlayer ? `player ${action.type}` : action.type}${props.highlighted ? ' jumped' : ''}`}
      data-action-id={action.id}
      {...(props.highlighted && { tabIndex: -1, 'aria-current': 'location' as const })}
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
