import { useEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  ApiError,
  describeError,
  type AdventureView,
  type AtVersion,
  type ContextManifest,
  type ContextPreview,
  type LastContext,
  type LoggedEvent,
  type MemoryView,
  type NarrativeState,
  type SummaryView,
} from './api';

const TABS = ['Context', 'State', 'Memories', 'Story cards', 'Timeline'] as const;
type Tab = (typeof TABS)[number];

interface PanelProps {
  base: string;
  view: AdventureView;
  busy: boolean;
  onChanged: () => Promise<void>;
}

/** What the engine did and knows, beside the story: one tab per part. */
export function Inspect(props: {
  adventureId: string;
  view: AdventureView;
  busy: boolean;
  onChanged: () => Promise<void>;
  onBranched: () => Promise<void>;
}) {
  const [tab, setTab] = useState<Tab>('Context');
  const base = `/v1/adventures/${encodeURIComponent(props.adventureId)}`;
  const panel: PanelProps = {
    base,
    view: props.view,
    busy: props.busy,
    onChanged: props.onChanged,
  };
  const tabs = useRef<HTMLDivElement>(null);
  const onKey = (e: KeyboardEvent) => {
    const at = TABS.indexOf(tab);
    const next = e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : null;
    if (next === null) return;
    const chosen = TABS[(next + TABS.length) % TABS.length];
    setTab(chosen);
    tabs.current?.querySelector<HTMLElement>(`[data-tab="${chosen}"]`)?.focus();
  };
  return (
    <aside class="inspect" aria-label="Inspect">
      <div class="tabs" role="tablist" aria-label="Inspect" ref={tabs} onKeyDown={onKey}>
        {TABS.map((name) => (
          <button
            key={name}
            type="button"
            role="tab"
            data-tab={name}
            id={`tab-${slug(name)}`}
            aria-selected={tab === name}
            aria-controls={`panel-${slug(name)}`}
            tabIndex={tab === name ? 0 : -1}
            onClick={() => setTab(name)}
          >
            {name}
          </button>
        ))}
      </div>
      <div
        class="panel"
        role="tabpanel"
        id={`panel-${slug(tab)}`}
        aria-labelledby={`tab-${slug(tab)}`}
      >
        {tab === 'Context' && <ContextPanel {...panel} />}
        {tab === 'State' && <StatePanel {...panel} />}
        {tab === 'Memories' && <MemoriesPanel {...panel} />}
        {tab === 'Story cards' && <CardsPanel {...panel} />}
        {tab === 'Timeline' && <TimelinePanel {...panel} onBranched={props.onBranched} />}
      </div>
    </aside>
  );
}

function slug(name: string): string {
  return name.toLowerCase().replace(/\s+/g, '-');
}

/**
 * A heading over a list, or over the sentence that says what its emptiness means: the shape of
 * every part of the manifest and of the last turn's decisions. `children` renders one item's
 * `<li>` (with its key).
 */
function TitledList<T>(props: {
  title: string;
  heading?: 'h3' | 'h4';
  /** The list's accessible name. */
  label: string;
  class?: string;
  items: readonly T[];
  empty: string;
  /** Shown under the heading whatever the items: a failure that explains a short list. */
  note?: preact.ComponentChildren;
  children: (item: T, index: number) => preact.ComponentChildren;
}) {
  const Heading = props.heading ?? 'h3';
  return (
    <>
      <Heading>{props.title}</Heading>
      {props.note}
      {props.items.length === 0 ? (
        <p class="empty">{props.empty}</p>
      ) : (
        <ul class={props.class} aria-label={props.label}>
          {props.items.map(props.children)}
        </ul>
      )}
    </>
  );
}

/**
 * A panel's changes, one at a time: each runs, then `after` reloads what it changed; `error`
 * says why the last one failed and `working` holds while one runs.
 */
function useChanges(after: () => Promise<unknown>) {
  const [error, setError] = useState<string | null>(null);
  const [working, setWorking] = useState(false);
  const act = async (run: () => Promise<unknown>) => {
    setError(null);
    setWorking(true);
    try {
      await run();
      await after();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setWorking(false);
    }
  };
  return { act, error, setError, working };
}

function Failure(props: { error: string | null }) {
  return props.error ? (
    <p role="alert" class="error">
      {props.error}
    </p>
  ) : null;
}

// ——— Context ———

function ContextPanel(props: PanelProps) {
  const [which, setWhich] = useState<'last' | 'dry'>('last');
  const [last, setLast] = useState<LastContext | null | undefined>(undefined);
  const [lastPrompt, setLastPrompt] = useState<{ system: string; story: string } | string | null>(
    null,
  );
  const [preview, setPreview] = useState<ContextPreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    if (which === 'last') {
      setLastPrompt(null);
      api
        .get<{ system: string; story: string }>(`${props.base}/context/prompt`)
        .then(setLastPrompt)
        .catch((e) => setLastPrompt(describeError(e)));
      api
        .get<LastContext>(`${props.base}/context`)
        .then(setLast)
        .catch((e) =>
          e instanceof ApiError && e.status === 404 ? setLast(null) : setError(describeError(e)),
        );
    } else {
      setPreview(null);
      api
        .post<ContextPreview>(`${props.base}/context/preview`)
        .then(setPreview)
        .catch((e) => setError(describeError(e)));
    }
  }, [which, props.view.version]);

  return (
    <div>
      <div class="row" role="group" aria-label="Which context">
        <button
          type="button"
          class={which === 'last' ? '' : 'secondary'}
          aria-pressed={which === 'last'}
          onClick={() => setWhich('last')}
        >
          Last turn
        </button>
        <button
          type="button"
          class={which === 'dry' ? '' : 'secondary'}
          aria-pressed={which === 'dry'}
          onClick={() => setWhich('dry')}
        >
          Dry run
        </button>
      </div>
      <Failure error={error} />
      {which === 'last' && last === undefined && !error && <p class="muted">Loading…</p>}
      {which === 'last' && last === null && (
        <p class="empty">No narrated turn yet. The dry run shows what the first one would send.</p>
      )}
      {which === 'last' && last && (
        <>
          <p class="muted small">
            Turn {last.turnId.slice(0, 8)}, version {last.version}.
          </p>
          <Manifest manifest={last.manifest} />
          {typeof lastPrompt === 'string' ? (
            <p class="muted small">{lastPrompt}</p>
          ) : lastPrompt ? (
            <Prompt system={lastPrompt.system} story={lastPrompt.story} />
          ) : (
            <p class="muted">Rebuilding the prompt…</p>
          )}
        </>
      )}
      {which === 'dry' && !preview && !error && <p class="muted">Building the context…</p>}
      {which === 'dry' && preview && (
        <>
          <Manifest
            manifest={{
              ...preview.report,
              memories: preview.report.memories?.used ?? null,
              memoryError: preview.report.memories?.error ?? null,
            }}
          />
          <Prompt system={preview.system} story={preview.story} />
        </>
      )}
    </div>
  );
}

/** The exact texts sent to (or, for a dry run, that would be sent to) the model. */
function Prompt(props: { system: string; story: string }) {
  return (
    <>
      <h3>Exact prompt</h3>
      <PromptPart name="System" text={props.system} />
      <PromptPart name="Story" text={props.story} />
    </>
  );
}

function PromptPart(props: { name: string; text: string }) {
  return (
    <details open>
      <summary>{props.name}</summary>
      <pre class="prompt" aria-label={`${props.name} prompt`}>
        {props.text}
      </pre>
    </details>
  );
}

function Manifest(props: { manifest: ContextManifest }) {
  const { manifest } = props;
  const budget = manifest.tokens.budget || 1;
  return (
    <div class="manifest">
      <p>
        <strong>{manifest.tokens.total}</strong> of {manifest.tokens.budget} tokens · history{' '}
        {manifest.history.included} of {manifest.history.total} actions
        {manifest.history.oldest_truncated ? ' (oldest cut)' : ''}
      </p>
      <ul class="bars" aria-label="Sections">
        {manifest.sections.map((s) => (
          <li key={s.label}>
            <span class="bar-label">
              {s.label} <span class="muted">{s.tokens}</span>
            </span>
            <Bar
              fraction={s.tokens / budget}
              label={`${s.label}: ${s.tokens} of ${budget} tokens`}
            />
          </li>
        ))}
      </ul>
      <TitledList
        title="Story cards"
        label="Cards in context"
        class="cards-fired"
        items={manifest.cards}
        empty="No story card was considered."
      >
        {(c) => (
          <li key={c.id} class={c.included ? 'included' : 'dropped'}>
            <strong>{c.name}</strong> {c.included ? 'included' : 'dropped'}
            {c.keyword ? <> — key “{c.keyword}”</> : null}
          </li>
        )}
      </TitledList>
      <TitledList
        title="Memories"
        label="Memories in context"
        items={manifest.memories ?? []}
        empty={manifest.memories === null ? 'The memory bank is off.' : 'No memory was retrieved.'}
        note={manifest.memoryError && <p class="error">{manifest.memoryError}</p>}
      >
        {(m) => (
          <li key={m.id}>
            <span class="score">{m.similarity.toFixed(3)}</span>
            {m.pinned ? ' pinned' : ''} {m.text ?? m.id}
          </li>
        )}
      </TitledList>
    </div>
  );
}

/** A bar whose width is set through the CSSOM (the CSP allows no inline style attribute). */
function Bar(props: { fraction: number; label: string }) {
  const fill = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    if (fill.current)
      fill.current.style.width = `${Math.min(100, Math.max(0, props.fraction * 100))}%`;
  }, [props.fraction]);
  return (
    <span class="bar" role="img" aria-label={props.label}>
      <span class="bar-fill" ref={fill} />
    </span>
  );
}

// ——— State ———

const OPS = {
  rename: ['id', 'name'],
  setStatus: ['id', 'status'],
  move: ['id', 'to'],
  setHolder: ['item', 'holder'],
  setDesc: ['id', 'desc'],
  addEntity: ['id', 'name', 'kind'],
  removeEntity: ['id'],
  addFact: ['text', 'about'],
  removeFact: ['text'],
} as const;
type Op = keyof typeof OPS;
const FIELD_LABELS: Record<string, string> = {
  id: 'Entity id',
  name: 'New name',
  status: 'Status',
  to: 'Place id',
  item: 'Item id',
  holder: 'Holder id',
  desc: 'Description',
  kind: 'Kind',
  text: 'Fact',
  about: 'About (ids, comma-separated)',
};

function StatePanel(props: PanelProps) {
  const { view } = props;
  const [op, setOp] = useState<Op>('setStatus');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const last = view.lastNarration;

  const correct = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setNotice(null);
    const f = (name: string) => (fields[name] ?? '').trim();
    const correction: Record<string, unknown> = { op };
    if (op === 'addEntity')
      correction.entity = { id: f('id'), name: f('name'), kind: f('kind') || 'character' };
    else
      for (const name of OPS[op]) {
        if (name === 'about') {
          if (f('about'))
            correction.about = f('about')
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
        } else
          correction[name] =
            f(name) === '' && name !== 'id' && name !== 'text' && name !== 'item' ? null : f(name);
      }
    try {
      await api.patch(`${props.base}/narrative-state`, { corrections: [correction] });
      setFields({});
      setNotice('Corrected.');
      await props.onChanged();
    } catch (e) {
      setError(describeError(e));
    }
  };

  const retcon = async (index: number) => {
    if (!last) return;
    setError(null);
    try {
      await api.post(`${props.base}/narrative-state/retcons`, { actionId: last.actionId, index });
      setNotice('Retconned.');
      await props.onChanged();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <div>
      <NarrativeTable state={view.narrativeState} />
      <h3>Last turn</h3>
      {!last ? (
        <p class="empty">No narration yet.</p>
      ) : (
        <>
          <TitledList
            title="Accepted"
            heading="h4"
            label="Accepted events"
            items={last.accepted}
            empty="No state change was accepted."
          >
            {(event, index) => {
              const withdrawn = last.retconned.includes(index);
              return (
                <li key={index} class={withdrawn ? 'withdrawn' : ''}>
                  <code>{describeStateEvent(event)}</code>
                  {withdrawn ? (
                    <span class="muted"> (retconned)</span>
                  ) : (
                    <button
                      type="button"
                      class="secondary small"
                      disabled={props.busy}
                      onClick={() => void retcon(index)}
                    >
                      Retcon
                    </button>
                  )}
                </li>
              );
            }}
          </TitledList>
          <TitledList
            title="Rejected"
            heading="h4"
            label="Rejected events"
            items={last.rejected}
            empty="Nothing was rejected."
          >
            {(r, index) => (
              <li key={index}>
                <code>{r.line}</code> — {r.reason}
                {r.fix ? <span class="muted"> ({r.fix})</span> : null}
              </li>
            )}
          </TitledList>
        </>
      )}
      <h3>Correct the state</h3>
      <form class="form" onSubmit={correct} aria-label="Correct the state">
        <label>
          Correction
          <select
            aria-label="Correction"
            value={op}
            onChange={(e) => setOp(e.currentTarget.value as Op)}
          >
            {Object.keys(OPS).map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        {OPS[op].map((name) => (
          <label key={`${op}-${name}`}>
            {op === 'addEntity' && name === 'name' ? 'Name of the entity' : FIELD_LABELS[name]}
            {name === 'kind' ? (
              <select
                aria-label="Kind"
                value={fields.kind ?? 'character'}
                onChange={(e) => setFields({ ...fields, kind: e.currentTarget.value })}
              >
                {['character', 'place', 'item', 'faction', 'other'].map((k) => (
                  <option key={k}>{k}</option>
                ))}
              </select>
            ) : (
              <input
                value={fields[name] ?? ''}
                onInput={(e) => setFields({ ...fields, [name]: e.currentTarget.value })}
              />
            )}
          </label>
        ))}
        <Failure error={error} />
        {notice && <p role="status">{notice}</p>}
        <button type="submit" disabled={props.busy}>
          Apply correction
        </button>
      </form>
    </div>
  );
}

function describeStateEvent(event: Record<string, unknown> & { type: string }): string {
  const { type, ...rest } = event;
  return `${type} ${Object.entries(rest)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
    .join(' ')}`;
}

function NarrativeTable(props: { state: NarrativeState }) {
  const entities = Object.values(props.state.entities ?? {});
  return (
    <div>
      <h3>Narrative state</h3>
      {entities.length === 0 && props.state.facts.length === 0 && (
        <p class="empty">The narrative state is empty.</p>
      )}
      {entities.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Entities">
            <thead>
              <tr>
                <th>id</th>
                <th>name</th>
                <th>kind</th>
                <th>status</th>
                <th>at / holder</th>
              </tr>
            </thead>
            <tbody>
              {entities.map((e) => (
                <tr key={e.id}>
                  <td>{e.id}</td>
                  <td>{e.name}</td>
                  <td>{e.kind}</td>
                  <td>{e.status ?? ''}</td>
                  <td>{e.at ?? e.holder ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {props.state.facts.length > 0 && (
        <ul aria-label="Facts">
          {props.state.facts.map((f) => (
            <li key={f.text}>{f.text}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

// ——— Memories ———

function MemoriesPanel(props: PanelProps) {
  const [memories, setMemories] = useState<MemoryView[] | null>(null);
  const [summary, setSummary] = useState<SummaryView | null>(null);
  const [summaryDraft, setSummaryDraft] = useState<string | null>(null);
  const [adding, setAdding] = useState('');
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const { act, error, setError, working } = useChanges(() => load());

  const load = async () => {
    try {
      const [list, sum] = await Promise.all([
        api.get<{ memories: MemoryView[] }>(`${props.base}/memories`),
        api.get<SummaryView>(`${props.base}/summary`),
      ]);
      setMemories(list.memories);
      setSummary(sum);
    } catch (e) {
      setError(describeError(e));
    }
  };
  useEffect(() => {
    void load();
  }, [props.view.version]);

  const m = (id: string) => `${props.base}/memories/${encodeURIComponent(id)}`;

  return (
    <div>
      <Failure error={error} />
      <h3>Summary</h3>
      {summary === null ? (
        <p class="muted">Loading…</p>
      ) : summaryDraft !== null ? (
        <div class="form">
          <textarea
            aria-label="Summary"
            rows={5}
            value={summaryDraft}
            onInput={(e) => setSummaryDraft(e.currentTarget.value)}
          />
          <div class="row">
            <button
              type="button"
              disabled={working}
              onClick={() =>
                void act(async () => {
                  await api.patch(`${props.base}/summary`, { text: summaryDraft });
                  setSummaryDraft(null);
                })
              }
            >
              Save summary
            </button>
            <button type="button" class="secondary" onClick={() => setSummaryDraft(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <>
          {summary.summary ? (
            <p class="summary">{summary.summary.text}</p>
          ) : (
            <p class="empty">No summary yet.</p>
          )}
          <div class="row">
            <button
              type="button"
              class="secondary small"
              onClick={() => setSummaryDraft(summary.summary?.text ?? '')}
            >
              Edit summary
            </button>
            <button
              type="button"
              class="secondary small"
              disabled={working || props.busy}
              onClick={() => void act(() => api.post(`${props.base}/summary/regenerate`))}
            >
              {working ? 'Working…' : 'Regenerate summary'}
            </button>
          </div>
        </>
      )}
      <h3>Memories</h3>
      {memories === null && !error && <p class="muted">Loading…</p>}
      {memories !== null && memories.length === 0 && <p class="empty">No memories yet.</p>}
      {memories !== null && memories.length > 0 && (
        <ul class="memories" aria-label="Memories">
          {memories.map((memory) => (
            <li key={memory.id} class={memory.forgotten ? 'withdrawn' : ''}>
              {editing?.id === memory.id ? (
                <div class="form">
                  <textarea
                    aria-label="Memory text"
                    rows={3}
                    value={editing.text}
                    onInput={(e) => setEditing({ id: memory.id, text: e.currentTarget.value })}
                  />
                  <div class="row">
                    <button
                      type="button"
                      class="small"
                      onClick={() =>
                        void act(async () => {
                          await api.patch(m(memory.id), { text: editing.text });
                          setEditing(null);
                        })
                      }
                    >
                      Save memory
                    </button>
                    <button type="button" class="secondary small" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </div>
                </div>
              ) : (
                <>
                  <p>
                    {memory.pinned && <span class="tag">pinned</span>}
                    {memory.forgotten && <span class="tag">forgotten</span>} {memory.text}
                  </p>
                  <p class="muted small">
                    used {memory.useCount}× · by {memory.createdBy}
                  </p>
                  <div class="row wrap">
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() =>
                        void act(() =>
                          api.post(`${m(memory.id)}/${memory.pinned ? 'unpin' : 'pin'}`),
                        )
                      }
                    >
                      {memory.pinned ? 'Unpin' : 'Pin'}
                    </button>
                    {!memory.forgotten && (
                      <button
                        type="button"
                        class="secondary small"
                        onClick={() => void act(() => api.post(`${m(memory.id)}/forget`))}
                      >
                        Forget
                      </button>
                    )}
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() => setEditing({ id: memory.id, text: memory.text })}
                    >
                      Edit memory
                    </button>
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() => void act(() => api.del(m(memory.id)))}
                    >
                      Delete memory
                    </button>
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!adding.trim()) return;
          void act(async () => {
            await api.post(`${props.base}/memories`, { text: adding });
            setAdding('');
          });
        }}
      >
        <label>
          New memory
          <textarea rows={2} value={adding} onInput={(e) => setAdding(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={working}>
          Add memory
        </button>
      </form>
    </div>
  );
}

// ——— Story cards ———

function CardsPanel(props: PanelProps) {
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

function TimelinePanel(props: PanelProps & { onBranched: () => Promise<void> }) {
  const latest = props.view.version;
  const [events, setEvents] = useState<LoggedEvent[] | null>(null);
  const [next, setNext] = useState<number | null>(null);
  const [version, setVersion] = useState(latest);
  const [at, setAt] = useState<AtVersion | null>(null);
  const [error, setError] = useState<string | null>(null);
  const asked = useRef(0);

  const loadEvents = async (after: number, append: boolean) => {
    try {
      const page = await api.get<{ events: LoggedEvent[]; next: number | null }>(
        `${props.base}/events?after=${after}&limit=200`,
      );
      setEvents((e) => (append && e ? [...e, ...page.events] : page.events));
      setNext(page.next);
    } catch (e) {
      setError(describeError(e));
    }
  };
  useEffect(() => {
    void loadEvents(Math.max(0, latest - 200), false);
    setVersion(latest);
  }, [latest]);

  // The adventure as it was: asked after the slider rests, and only the newest answer is shown.
  useEffect(() => {
    const ticket = ++asked.current;
    const timer = setTimeout(() => {
      api
        .get<AtVersion>(`${props.base}/at/${version}`)
        .then((answer) => ticket === asked.current && setAt(answer))
        .catch((e) => ticket === asked.current && setError(describeError(e)));
    }, 150);
    return () => clearTimeout(timer);
  }, [version]);

  const branch = async () => {
    if (!at?.head) return;
    setError(null);
    try {
      await api.put(`${props.base}/head`, { actionId: at.head });
      await props.onBranched();
    } catch (e) {
      setError(describeError(e));
    }
  };

  return (
    <div>
      {/* The output stands outside the label: inside it, the slider's accessible name would
          read "Version 5 / 7" instead of the "Version" the README promises. */}
      <div class="slider">
        <label>
          Version
          <input
            type="range"
            min={1}
            max={latest}
            value={version}
            onInput={(e) => setVersion(Number(e.currentTarget.value))}
          />
        </label>
        <output aria-label="Version shown">
          {version} / {latest}
        </output>
      </div>
      <Failure error={error} />
      {at && at.version === version ? (
        <div class="at" aria-label={`The adventure at version ${version}`}>
          <div class="row spread">
            <span class="muted small">
              {at.actions.length} newest actions at version {at.version}
            </span>
            <button
              type="button"
              class="secondary small"
              disabled={props.busy || version === latest || !at.head}
              onClick={() => void branch()}
            >
              Branch from here
            </button>
          </div>
          <ol class="at-story">
            {at.actions.slice(-8).map((a) => (
              <li key={a.id} class={a.type === 'ai' ? 'ai' : 'player'}>
                {a.text}
              </li>
            ))}
          </ol>
        </div>
      ) : (
        <p class="muted">Loading version {version}…</p>
      )}
      <h3>Event log</h3>
      {events === null && !error && <p class="muted">Loading…</p>}
      {events !== null && (
        <ol class="events" aria-label="Event log">
          {events.map((e) => (
            <li key={e.id} class={e.version === version ? 'current' : ''}>
              <button type="button" class="ghost small" onClick={() => setVersion(e.version)}>
                {e.version}
              </button>{' '}
              <strong>{e.type}</strong>{' '}
              <span class="muted small">{new Date(e.recordedAt).toLocaleTimeString()}</span>
            </li>
          ))}
        </ol>
      )}
      {next !== null && (
        <button type="button" class="secondary small" onClick={() => void loadEvents(next, true)}>
          More events
        </button>
      )}
    </div>
  );
}
