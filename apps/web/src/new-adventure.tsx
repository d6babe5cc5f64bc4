import { useState } from 'preact/hooks';
import { api, describeError } from './api';
import { placeholderNames } from './placeholders';

interface CardDraft {
  name: string;
  keys: string;
  entry: string;
}

/** The scenario form: every field of POST /v1/adventures, the opening's placeholders asked. */
export function NewAdventure(props: { onCancel: () => void; onCreated: (id: string) => void }) {
  const [title, setTitle] = useState('');
  const [opening, setOpening] = useState('');
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [plotEssentials, setPlot] = useState('');
  const [authorsNote, setNote] = useState('');
  const [aiInstructions, setInstructions] = useState('');
  const [persona, setPersona] = useState({ name: '', pronouns: '', description: '' });
  const [cards, setCards] = useState<CardDraft[]>([]);
  const [model, setModel] = useState('');
  const [temperature, setTemperature] = useState('0.8');
  const [maxOutputTokens, setMaxOutput] = useState('800');
  const [contextTokenBudget, setBudget] = useState('16384');
  const [memoryBank, setMemoryBank] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const names = placeholderNames(opening);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const placeholders: Record<string, string> = {};
      for (const name of names) placeholders[name] = answers[name] ?? '';
      const body: Record<string, unknown> = {
        title,
        opening,
        placeholders,
        plotEssentials,
        authorsNote,
        aiInstructions,
        settings: {
          ...(model.trim() ? { model: model.trim() } : {}),
          temperature: Number(temperature),
          maxOutputTokens: Number(maxOutputTokens),
          contextTokenBudget: Number(contextTokenBudget),
          memoryBankEnabled: memoryBank,
        },
        storyCards: cards.filter((c) => c.name.trim()),
      };
      if (persona.name || persona.pronouns || persona.description) body.persona = persona;
      const created = await api.post<{ id: string }>('/v1/adventures', body);
      props.onCreated(created.id);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card form" onSubmit={submit} aria-label="New adventure">
      <h1>New adventure</h1>
      <label>
        Title
        <input required value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      </label>
      <label>
        Opening
        <textarea
          required
          rows={5}
          value={opening}
          placeholder="You are ${Name}, the keeper of the last lighthouse."
          onInput={(e) => setOpening(e.currentTarget.value)}
        />
      </label>
      {names.length > 0 && (
        <fieldset>
          <legend>Placeholders in the opening</legend>
          {names.map((name) => (
            <label key={name}>
              {name}
              <input
                required
                value={answers[name] ?? ''}
                onInput={(e) => setAnswers({ ...answers, [name]: e.currentTarget.value })}
              />
            </label>
          ))}
        </fieldset>
      )}
      <label>
        Plot essentials
        <textarea rows={3} value={plotEssentials} onInput={(e) => setPlot(e.currentTarget.value)} />
      </label>
      <label>
        Author's note
        <textarea rows={2} value={authorsNote} onInput={(e) => setNote(e.currentTarget.value)} />
      </label>
      <label>
        AI instructions
        <textarea
          rows={2}
          value={aiInstructions}
          onInput={(e) => setInstructions(e.currentTarget.value)}
        />
      </label>
      <fieldset>
        <legend>Persona</legend>
        <div class="grid2">
          <label>
            Persona name
            <input
              value={persona.name}
              onInput={(e) => setPersona({ ...persona, name: e.currentTarget.value })}
            />
          </label>
          <label>
            Pronouns
            <input
              value={persona.pronouns}
              onInput={(e) => setPersona({ ...persona, pronouns: e.currentTarget.value })}
            />
          </label>
        </div>
        <label>
          Persona description
          <textarea
            rows={2}
            value={persona.description}
            onInput={(e) => setPersona({ ...persona, description: e.currentTarget.value })}
          />
        </label>
      </fieldset>
      <fieldset>
        <legend>Story cards</legend>
        {cards.map((card, i) => {
          const set = (change: Partial<CardDraft>) =>
            setCards(cards.map((c, j) => (j === i ? { ...c, ...change } : c)));
          return (
            <div class="draft-card" key={i}>
              <label>
                Card {i + 1} name
                <input value={card.name} onInput={(e) => set({ name: e.currentTarget.value })} />
              </label>
              <label>
                Card {i + 1} keys
                <input value={card.keys} onInput={(e) => set({ keys: e.currentTarget.value })} />
              </label>
              <label>
                Card {i + 1} entry
                <textarea
                  rows={2}
                  value={card.entry}
                  onInput={(e) => set({ entry: e.currentTarget.value })}
                />
              </label>
              <button
                type="button"
                class="secondary small"
                onClick={() => setCards(cards.filter((_, j) => j !== i))}
              >
                Remove card {i + 1}
              </button>
            </div>
          );
        })}
        <button
          type="button"
          class="secondary"
          onClick={() => setCards([...cards, { name: '', keys: '', entry: '' }])}
        >
          Add a story card
        </button>
      </fieldset>
      <fieldset>
        <legend>Model settings</legend>
        <div class="grid2">
          <label>
            Model
            <input
              value={model}
              placeholder="installation default"
              onInput={(e) => setModel(e.currentTarget.value)}
            />
          </label>
          <label>
            Temperature
            <input
              type="number"
              step="0.05"
              min="0"
              max="2"
              value={temperature}
              onInput={(e) => setTemperature(e.currentTarget.value)}
            />
          </label>
          <label>
            Output cap (tokens)
            <input
              type="number"
              min="1"
              value={maxOutputTokens}
              onInput={(e) => setMaxOutput(e.currentTarget.value)}
            />
          </label>
          <label>
            Context budget (tokens)
            <input
              type="number"
              min="1"
              value={contextTokenBudget}
              onInput={(e) => setBudget(e.currentTarget.value)}
            />
          </label>
        </div>
        <label class="check">
          <input
            type="checkbox"
            checked={memoryBank}
            onChange={(e) => setMemoryBank(e.currentTarget.checked)}
          />
          Memory bank
        </label>
      </fieldset>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" disabled={busy}>
          Create
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
