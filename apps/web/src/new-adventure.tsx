import { useState } from 'preact/hooks';
import { api, describeError } from './api';
import { placeholderNames } from './placeholders';

interface CardDraft {
  name: string;
  keys: string;
  entry: string;
}

interface Persona {
  name: string;
  pronouns: string;
  description: string;
}

/** The model settings as typed (numbers as the fields hold them). */
interface SettingsDraft {
  model: string;
  temperature: string;
  maxOutputTokens: string;
  contextTokenBudget: string;
  memoryBank: boolean;
}

const SETTINGS: SettingsDraft = {
  model: '',
  temperature: '0.8',
  maxOutputTokens: '800',
  contextTokenBudget: '16384',
  memoryBank: false,
};

/** The scenario form: every field of POST /v1/adventures, the opening's placeholders asked. */
export function NewAdventure(props: { onCancel: () => void; onCreated: (id: string) => void }) {
  const [title, setTitle] = useState('');
  const [opening, setOpening] = useState('');
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [plotEssentials, setPlot] = useState('');
  const [authorsNote, setNote] = useState('');
  const [aiInstructions, setInstructions] = useState('');
  const [persona, setPersona] = useState<Persona>({ name: '', pronouns: '', description: '' });
  const [cards, setCards] = useState<CardDraft[]>([]);
  const [settings, setSettings] = useState(SETTINGS);
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
        settings: settingsOf(settings),
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
      <PlaceholderFields names={names} answers={answers} onAnswers={setAnswers} />
      <TextArea label="Plot essentials" rows={3} value={plotEssentials} onValue={setPlot} />
      <TextArea label="Author's note" rows={2} value={authorsNote} onValue={setNote} />
      <TextArea label="AI instructions" rows={2} value={aiInstructions} onValue={setInstructions} />
      <PersonaFields persona={persona} onPersona={setPersona} />
      <CardDrafts cards={cards} onCards={setCards} />
      <ModelSettings settings={settings} onSettings={setSettings} />
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

/** The settings as POST /v1/adventures takes them: an empty model is the installation's. */
function settingsOf(draft: SettingsDraft) {
  return {
    ...(draft.model.trim() ? { model: draft.model.trim() } : {}),
    temperature: Number(draft.temperature),
    maxOutputTokens: Number(draft.maxOutputTokens),
    contextTokenBudget: Number(draft.contextTokenBudget),
    memoryBankEnabled: draft.memoryBank,
  };
}

function TextArea(props: {
  label: string;
  rows: number;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <label>
      {props.label}
      <textarea
        rows={props.rows}
        value={props.value}
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
    </label>
  );
}

/** One field per `${Name}` in the opening. */
function PlaceholderFields(props: {
  names: string[];
  answers: Record<string, string>;
  onAnswers: (answers: Record<string, string>) => void;
}) {
  const { names, answers } = props;
  if (names.length === 0) return null;
  return (
    <fieldset>
      <legend>Placeholders in the opening</legend>
      {names.map((name) => (
        <label key={name}>
          {name}
          <input
            required
            value={answers[name] ?? ''}
            onInput={(e) => props.onAnswers({ ...answers, [name]: e.currentTarget.value })}
          />
        </label>
      ))}
    </fieldset>
  );
}

function PersonaFields(props: { persona: Persona; onPersona: (persona: Persona) => void }) {
  const { persona, onPersona } = props;
  return (
    <fieldset>
      <legend>Persona</legend>
      <div class="grid2">
        <label>
          Persona name
          <input
            value={persona.name}
            onInput={(e) => onPersona({ ...persona, name: e.currentTarget.value })}
          />
        </label>
        <label>
          Pronouns
          <input
            value={persona.pronouns}
            onInput={(e) => onPersona({ ...persona, pronouns: e.currentTarget.value })}
          />
        </label>
      </div>
      <TextArea
        label="Persona description"
        rows={2}
        value={persona.description}
        onValue={(description) => onPersona({ ...persona, description })}
      />
    </fieldset>
  );
}

function CardDrafts(props: { cards: CardDraft[]; onCards: (cards: CardDraft[]) => void }) {
  const { cards, onCards } = props;
  return (
    <fieldset>
      <legend>Story cards</legend>
      {cards.map((card, i) => {
        const set = (change: Partial<CardDraft>) =>
          onCards(cards.map((c, j) => (j === i ? { ...c, ...change } : c)));
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
            <TextArea
              label={`Card ${i + 1} entry`}
              rows={2}
              value={card.entry}
              onValue={(entry) => set({ entry })}
            />
            <button
              type="button"
              class="secondary small"
              onClick={() => onCards(cards.filter((_, j) => j !== i))}
            >
              Remove card {i + 1}
            </button>
          </div>
        );
      })}
      <button
        type="button"
        class="secondary"
        onClick={() => onCards([...cards, { name: '', keys: '', entry: '' }])}
      >
        Add a story card
      </button>
    </fieldset>
  );
}

function ModelSettings(props: {
  settings: SettingsDraft;
  onSettings: (settings: SettingsDraft) => void;
}) {
  const { settings } = props;
  const set = (change: Partial<SettingsDraft>) => props.onSettings({ ...settings, ...change });
  return (
    <fieldset>
      <legend>Model settings</legend>
      <div class="grid2">
        <label>
          Model
          <input
            value={settings.model}
            placeholder="installation default"
            onInput={(e) => set({ model: e.currentTarget.value })}
          />
        </label>
        <label>
          Temperature
          <input
            type="number"
            step="0.05"
            min="0"
            max="2"
            value={settings.temperature}
            onInput={(e) => set({ temperature: e.currentTarget.value })}
          />
        </label>
        <label>
          Output cap (tokens)
          <input
            type="number"
            min="1"
            value={settings.maxOutputTokens}
            onInput={(e) => set({ maxOutputTokens: e.currentTarget.value })}
          />
        </label>
        <label>
          Context budget (tokens)
          <input
            type="number"
            min="1"
            value={settings.contextTokenBudget}
            onInput={(e) => set({ contextTokenBudget: e.currentTarget.value })}
          />
        </label>
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={settings.memoryBank}
          onChange={(e) => set({ memoryBank: e.currentTarget.checked })}
        />
        Memory bank
      </label>
    </fieldset>
  );
}
