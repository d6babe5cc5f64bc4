// The Story cards tab: the adventure's cards, added, edited and removed.
import { useState } from 'preact/hooks';
import { api, type StoryCard } from './api';
import { type PanelProps, useChanges, Failure } from './inspect.shared';

type Act = (run: () => Promise<unknown>) => Promise<void>;
type CardFields = { name: string; keys: string; entry: string };

export function CardsPanel(props: PanelProps) {
  const { act, error, working } = useChanges(props.onChanged);
  const cards = props.view.storyCards;
  return (
    <div>
      {cards.length === 0 && (
        <p class="empty">
          No story cards yet. A card enters the context when one of its keys appears in the story.
        </p>
      )}
      <ul class="story-cards" aria-label="Story cards">
        {cards.map((card) => (
          <Card key={card.id} base={props.base} card={card} act={act} />
        ))}
      </ul>
      <NewCard base={props.base} act={act} error={error} working={working} />
    </div>
  );
}

function Card(props: { base: string; card: StoryCard; act: Act }) {
  const { card, act } = props;
  const [editing, setEditing] = useState<CardFields | null>(null);
  const url = `${props.base}/story-cards/${encodeURIComponent(card.id)}`;
  if (editing) {
    return (
      <li>
        <div class="form">
          <CardEditor fields={editing} onFields={setEditing} />
          <div class="row">
            <button
              type="button"
              class="small"
              onClick={() =>
                void act(async () => {
                  await api.patch(url, editing);
                  setEditing(null);
                })
              }
            >
              Save card
            </button>
            <button type="button" class="secondary small" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </div>
      </li>
    );
  }
  return (
    <li>
      <p>
        <strong>{card.name}</strong> <span class="muted small">keys: {card.keys || '—'}</span>
      </p>
      <p class="small">{card.entry}</p>
      <div class="row">
        <button
          type="button"
          class="secondary small"
          onClick={() =>
            setEditing({ name: card.name, keys: card.keys ?? '', entry: card.entry ?? '' })
          }
        >
          Edit card
        </button>
        <button type="button" class="secondary small" onClick={() => void act(() => api.del(url))}>
          Remove card
        </button>
      </div>
    </li>
  );
}

function CardEditor(props: { fields: CardFields; onFields: (fields: CardFields) => void }) {
  const { fields, onFields } = props;
  return (
    <>
      <label>
        Card name
        <input
          value={fields.name}
          onInput={(e) => onFields({ ...fields, name: e.currentTarget.value })}
        />
      </label>
      <label>
        Card keys
        <input
          value={fields.keys}
          onInput={(e) => onFields({ ...fields, keys: e.currentTarget.value })}
        />
      </label>
      <label>
        Card entry
        <textarea
          rows={3}
          value={fields.entry}
          onInput={(e) => onFields({ ...fields, entry: e.currentTarget.value })}
        />
      </label>
    </>
  );
}

function NewCard(props: { base: string; act: Act; error: string | null; working: boolean }) {
  const [draft, setDraft] = useState<CardFields>({ name: '', keys: '', entry: '' });
  return (
    <form
      class="form"
      aria-label="Add a story card"
      onSubmit={(e) => {
        e.preventDefault();
        void props.act(async () => {
          await api.post(`${props.base}/story-cards`, draft);
          setDraft({ name: '', keys: '', entry: '' });
        });
      }}
    >
      <label>
        Name
        <input
          required
          value={draft.name}
          onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
        />
      </label>
      <label>
        Keys
        <input
          value={draft.keys}
          placeholder="comma-separated"
          onInput={(e) => setDraft({ ...draft, keys: e.currentTarget.value })}
        />
      </label>
      <label>
        Entry
        <textarea
          rows={3}
          value={draft.entry}
          onInput={(e) => setDraft({ ...draft, entry: e.currentTarget.value })}
        />
      </label>
      <Failure error={props.error} />
      <button type="submit" disabled={props.working}>
        Add card
      </button>
    </form>
  );
}
