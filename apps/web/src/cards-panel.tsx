// The Story cards tab: the adventure's cards, added, edited and removed.
import { useState } from 'preact/hooks';
import { api } from './api';
import { type PanelProps, useChanges, Failure } from './inspect.shared';

export function CardsPanel(props: PanelProps) {
  const [draft, setDraft] = useState({ name: '', keys: '', entry: '' });
  const [editing, setEditing] = useState<{
    id: string;
    name: string;
    keys: string;
    entry: string;
  } | null>(null);
  const { act, error, working } = useChanges(props.onChanged);
  const cards = props.view.storyCards;
  const c = (id: string) => `${props.base}/story-cards/${encodeURIComponent(id)}`;
  return (
    <div>
      {cards.length === 0 && (
        <p class="empty">
          No story cards yet. A card enters the context when one of its keys appears in the story.
        </p>
      )}
      <ul class="story-cards" aria-label="Story cards">
        {cards.map((card) => (
          <li key={card.id}>
            {editing?.id === card.id ? (
              <div class="form">
                <label>
                  Card name
                  <input
                    value={editing.name}
                    onInput={(e) => setEditing({ ...editing, name: e.currentTarget.value })}
                  />
                </label>
                <label>
                  Card keys
                  <input
                    value={editing.keys}
                    onInput={(e) => setEditing({ ...editing, keys: e.currentTarget.value })}
                  />
                </label>
                <label>
                  Card entry
                  <textarea
                    rows={3}
                    value={editing.entry}
                    onInput={(e) => setEditing({ ...editing, entry: e.currentTarget.value })}
                  />
                </label>
                <div class="row">
                  <button
                    type="button"
                    class="small"
                    onClick={() =>
                      void act(async () => {
                        await api.patch(c(card.id), {
                          name: editing.name,
                          keys: editing.keys,
                          entry: editing.entry,
                        });
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
            ) : (
              <>
                <p>
                  <strong>{card.name}</strong>{' '}
                  <span class="muted small">keys: {card.keys || '—'}</span>
                </p>
                <p class="small">{card.entry}</p>
                <div class="row">
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() =>
                      setEditing({
                        id: card.id,
                        name: card.name,
                        keys: card.keys ?? '',
                        entry: card.entry ?? '',
                      })
                    }
                  >
                    Edit card
                  </button>
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => void act(() => api.del(c(card.id)))}
                  >
                    Remove card
                  </button>
                </div>
              </>
            )}
          </li>
        ))}
      </ul>
      <form
        class="form"
        aria-label="Add a story card"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
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
        <Failure error={error} />
        <button type="submit" disabled={working}>
          Add card
        </button>
      </form>
    </div>
  );
}

// ——— Timeline ———
