// The Memories tab: memories (add, pin, edit, forget) and the summary.
import { useEffect, useState } from 'preact/hooks';
import { api, describeError, type MemoryView, type SummaryView } from './api';
import { type PanelProps, useChanges, Failure } from './inspect.shared';

export function MemoriesPanel(props: PanelProps) {
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
