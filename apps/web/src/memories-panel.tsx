// The Memories tab: memories (add, pin, edit, forget, expand to their sources) and the summary.
import { useEffect, useState } from 'preact/hooks';
import { api, describeError, type MemorySources, type MemoryView, type SummaryView } from './api';
import { excerpt, kindOf } from './cited-actions';
import { type PanelProps, useChanges, Failure } from './inspect.shared';

type Act = (run: () => Promise<unknown>) => Promise<void>;

export function MemoriesPanel(props: PanelProps) {
  const [memories, setMemories] = useState<MemoryView[] | null>(null);
  const [summary, setSummary] = useState<SummaryView | null>(null);
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

  return (
    <div>
      <Failure error={error} />
      <h3>Summary</h3>
      {summary === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <Summary {...props} summary={summary} act={act} working={working} />
      )}
      <h3>Memories</h3>
      {memories === null && !error && <p class="muted">Loading…</p>}
      {memories !== null && memories.length === 0 && <p class="empty">No memories yet.</p>}
      {memories !== null && memories.length > 0 && (
        <ul class="memories" aria-label="Memories">
          {memories.map((memory) => (
            <Memory key={memory.id} {...props} memory={memory} act={act} />
          ))}
        </ul>
      )}
      <NewMemory base={props.base} act={act} working={working} />
    </div>
  );
}

function Summary(props: PanelProps & { summary: SummaryView; act: Act; working: boolean }) {
  const { summary, act, working } = props;
  const [draft, setDraft] = useState<string | null>(null);
  if (draft !== null) {
    return (
      <div class="form">
        <textarea
          aria-label="Summary"
          rows={5}
          value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)}
        />
        <div class="row">
          <button
            type="button"
            disabled={working}
            onClick={() =>
              void act(async () => {
                await api.patch(`${props.base}/summary`, { text: draft });
                setDraft(null);
              })
            }
          >
            Save summary
          </button>
          <button type="button" class="secondary" onClick={() => setDraft(null)}>
            Cancel
          </button>
        </div>
      </div>
    );
  }
  return (
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
          onClick={() => setDraft(summary.summary?.text ?? '')}
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
  );
}

function Memory(props: PanelProps & { memory: MemoryView; act: Act }) {
  const { memory, act } = props;
  const [editing, setEditing] = useState<string | null>(null);
  const [expanded, setExpanded] = useState(false);
  const m = `${props.base}/memories/${encodeURIComponent(memory.id)}`;
  if (editing !== null) {
    return (
      <li class={memory.forgotten ? 'withdrawn' : ''}>
        <MemoryEditor
          text={editing}
          onText={setEditing}
          onSave={() =>
            void act(async () => {
              await api.patch(m, { text: editing });
              setEditing(null);
            })
          }
          onCancel={() => setEditing(null)}
        />
      </li>
    );
  }
  const sources = memory.sourceActionIds?.length ?? 0;
  return (
    <li class={memory.forgotten ? 'withdrawn' : ''}>
      <p>
        {memory.pinned && <span class="tag">pinned</span>}
        {memory.forgotten && <span class="tag">forgotten</span>} {memory.text}
      </p>
      <p class="muted small">
        used {memory.useCount}× · by {memory.createdBy}
      </p>
      <div class="row wrap">
        {sources > 0 && (
          <button
            type="button"
            class="secondary small"
            aria-expanded={expanded}
            onClick={() => setExpanded((open) => !open)}
          >
            Sources ({sources})
          </button>
        )}
        <button
          type="button"
          class="secondary small"
          onClick={() => void act(() => api.post(`${m}/${memory.pinned ? 'unpin' : 'pin'}`))}
        >
          {memory.pinned ? 'Unpin' : 'Pin'}
        </button>
        {!memory.forgotten && (
          <button
            type="button"
            class="secondary small"
            onClick={() => void act(() => api.post(`${m}/forget`))}
          >
            Forget
          </button>
        )}
        <button type="button" class="secondary small" onClick={() => setEditing(memory.text)}>
          Edit memory
        </button>
        <button type="button" class="secondary small" onClick={() => void act(() => api.del(m))}>
          Delete memory
        </button>
      </div>
      {expanded && <Sources memoryUrl={m} jumpTo={props.jumpTo} />}
    </li>
  );
}

function MemoryEditor(props: {
  text: string;
  onText: (text: string) => void;
  onSave: () => void;
  onCancel: () => void;
}) {
  return (
    <div class="form">
      <textarea
        aria-label="Memory text"
        rows={3}
        value={props.text}
        onInput={(e) => props.onText(e.currentTarget.value)}
      />
      <div class="row">
        <button type="button" class="small" onClick={props.onSave}>
          Save memory
        </button>
        <button type="button" class="secondary small" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** A memory's source actions on the current path, each with a jump to it in the story. */
function Sources(props: { memoryUrl: string; jumpTo: (actionId: string) => void }) {
  const [sources, setSources] = useState<MemorySources | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api
      .get<MemorySources>(`${props.memoryUrl}/sources`)
      .then(setSources)
      .catch((e) => setError(describeError(e)));
  }, [props.memoryUrl]);
  if (error) return <p class="error">{error}</p>;
  if (!sources) return <p class="muted small">Loading the sources…</p>;
  return (
    <ol class="sources" aria-label="Sources">
      {sources.sources.map((source, index) => (
        <li key={source.actionId}>
          <p class="excerpt" id={`source-${source.actionId}`}>
            {excerpt(source.text)}
          </p>
          <button
            type="button"
            class="secondary small"
            aria-describedby={`source-${source.actionId}`}
            onClick={() => props.jumpTo(source.actionId)}
          >
            Go to source {index + 1} ({kindOf(source.type)})
          </button>
        </li>
      ))}
    </ol>
  );
}

function NewMemory(props: { base: string; act: Act; working: boolean }) {
  const [adding, setAdding] = useState('');
  return (
    <form
      class="form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!adding.trim()) return;
        void props.act(async () => {
          await api.post(`${props.base}/memories`, { text: adding });
          setAdding('');
        });
      }}
    >
      <label>
        New memory
        <textarea rows={2} value={adding} onInput={(e) => setAdding(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={props.working}>
        Add memory
      </button>
    </form>
  );
}
