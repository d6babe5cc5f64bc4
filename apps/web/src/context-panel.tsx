// The Context tab: the prompt the last turn sent (or would send now) and its manifest.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  api,
  ApiError,
  describeError,
  type ContextManifest,
  type ContextPreview,
  type LastContext,
} from './api';
import { RecalledPassages } from './cited-actions';
import { type PanelProps, TitledList, Failure } from './inspect.shared';

/** The action being typed, as the dry run supposes it (null when nothing is typed). */
export interface DraftAction {
  type: 'do' | 'say' | 'story';
  text: string;
}

export function ContextPanel(props: PanelProps & { draft: DraftAction | null }) {
  const [which, setWhich] = useState<'last' | 'dry'>('last');
  // The dry run supposes the action typed when it is asked for (a run per keystroke would spend
  // the turn limit); "Run again" takes what is typed then.
  const [dryRuns, setDryRuns] = useState(0);
  const report = useContextReport(props, which, dryRuns);
  const cite = { base: props.base, jumpTo: props.jumpTo };
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
        {which === 'dry' && (
          <button type="button" class="secondary" onClick={() => setDryRuns((n) => n + 1)}>
            Run again
          </button>
        )}
      </div>
      <Failure error={report.error} />
      {which === 'last' ? <LastTurn {...report} cite={cite} /> : <DryRun {...report} cite={cite} />}
    </div>
  );
}

type Cite = { base: string; jumpTo: (actionId: string) => void };

/**
 * The last turn's manifest and prompt, or the dry run's context for the action typed when it was
 * asked for: loaded again when the story's version changes.
 */
function useContextReport(
  props: PanelProps & { draft: DraftAction | null },
  which: 'last' | 'dry',
  dryRuns: number,
) {
  const [supposed, setSupposed] = useState<DraftAction | null>(null);
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
      const draft = props.draft;
      setSupposed(draft);
      api
        .post<ContextPreview>(`${props.base}/context/preview`, draft ?? undefined)
        .then(setPreview)
        .catch((e) => setError(describeError(e)));
    }
  }, [which, props.view.version, dryRuns]);
  return { supposed, last, lastPrompt, preview, error };
}

type Report = ReturnType<typeof useContextReport> & { cite: Cite };

function LastTurn({ last, lastPrompt, error, cite }: Report) {
  if (last === undefined) return error ? null : <p class="muted">Loading…</p>;
  if (last === null) {
    return (
      <p class="empty">No narrated turn yet. The dry run shows what the first one would send.</p>
    );
  }
  return (
    <>
      <p class="muted small">
        Turn {last.turnId.slice(0, 8)}, version {last.version}.
      </p>
      <Manifest manifest={last.manifest} cite={cite} />
      {typeof lastPrompt === 'string' ? (
        <p class="muted small">{lastPrompt}</p>
      ) : lastPrompt ? (
        <Prompt system={lastPrompt.system} story={lastPrompt.story} />
      ) : (
        <p class="muted">Rebuilding the prompt…</p>
      )}
    </>
  );
}

function DryRun({ preview, supposed, error, cite }: Report) {
  if (!preview) return error ? null : <p class="muted">Building the context…</p>;
  return (
    <>
      <p class="muted small">
        {supposed
          ? `For the action being typed (${supposed.type}): ${supposed.text}`
          : 'For the story as it stands (no action typed).'}
      </p>
      <Manifest
        manifest={{
          ...preview.report,
          memories: preview.report.memories?.used ?? null,
          memoryError: preview.report.memories?.error ?? null,
        }}
        cite={cite}
      />
      <Prompt system={preview.system} story={preview.story} />
    </>
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

function Manifest(props: { manifest: ContextManifest; cite: Cite }) {
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
      <RecalledPassages {...props.cite} report={manifest.passages} />
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
