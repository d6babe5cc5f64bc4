// Actions a report cites (the passages a turn recalled, the sources of a memory), each shown by
// an excerpt of its text with a control that jumps to it in the story view.
import { useEffect, useState } from 'preact/hooks';
import { api, type PassageReport, type RecalledPassage, type StoryAction } from './api';
import { TitledList } from './inspect.shared';

const EXCERPT_CHARS = 220;

export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS - 1)}…` : flat;
}

/** What a cited action is, in the player's words. */
export function kindOf(type: StoryAction['type']): string {
  return type === 'ai' ? 'narration' : type === 'start' ? 'opening' : `${type} action`;
}

/**
 * The texts of the cited actions, read from the story at the head: null while they load, and
 * per action null when it is no longer on the path (undone, erased, on another branch).
 */
function useActionTexts(base: string, ids: readonly string[]) {
  const [texts, setTexts] = useState<Map<string, string | null> | null>(null);
  const key = ids.join(',');
  useEffect(() => {
    let current = true;
    setTexts(null);
    void Promise.all(
      ids.map((id) =>
        api
          .get<StoryAction>(`${base}/actions/${encodeURIComponent(id)}`)
          .then((action) => [id, action.text] as const)
          .catch(() => [id, null] as const),
      ),
    ).then((pairs) => current && setTexts(new Map(pairs)));
    return () => {
      current = false;
    };
  }, [base, key]);
  return texts;
}

/** Why recall chose a passage: its rank by words, by meaning, and the fused score. */
function why(passage: RecalledPassage): string {
  const rank = (r: number | null, by: string) =>
    r === null ? `not ranked by ${by}` : `#${r} by ${by}`;
  return `${rank(passage.lexicalRank, 'words')}, ${rank(passage.vectorRank, 'meaning')}; fused ${passage.fused.toFixed(4)}`;
}

/** The Context report's recalled passages, in prompt (story) order. */
export function RecalledPassages(props: {
  base: string;
  report: PassageReport | undefined;
  jumpTo: (actionId: string) => void;
}) {
  const used = props.report?.used ?? [];
  const texts = useActionTexts(
    props.base,
    used.map((p) => p.actionId),
  );
  const { report } = props;
  const empty = !report
    ? 'The memory bank is off: no passage of the story is recalled.'
    : report.inHistory > 0
      ? `No passage recalled beyond the history (${report.inHistory} found are in it already).`
      : 'No passage of the story was recalled.';
  return (
    <TitledList
      title="Recalled passages"
      label="Recalled passages"
      class="passages"
      items={used}
      empty={empty}
      note={report?.error && <p class="error">{report.error}</p>}
    >
      {(passage) => {
        const number = passage.position + 1;
        const text = texts?.get(passage.actionId);
        const describedBy = `passage-${passage.actionId}`;
        return (
          <li key={passage.actionId}>
            <p class="excerpt" id={describedBy}>
              {texts === null
                ? 'Loading…'
                : text === null
                  ? '(no longer in the story)'
                  : excerpt(text ?? '')}
            </p>
            <p class="muted small">
              {kindOf(passage.type)}, action {number} · {why(passage)}
            </p>
            <button
              type="button"
              class="secondary small"
              aria-describedby={describedBy}
              disabled={text === null}
              onClick={() => props.jumpTo(passage.actionId)}
            >
              Go to action {number}
            </button>
          </li>
        );
      }}
    </TitledList>
  );
}
