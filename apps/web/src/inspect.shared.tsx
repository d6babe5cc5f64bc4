// What the Inspect panels share: their props, a titled list, the change helper, the error line.
import { useState } from 'preact/hooks';
import { describeError, type AdventureView } from './api';

export interface PanelProps {
  base: string;
  view: AdventureView;
  busy: boolean;
  onChanged: () => Promise<void>;
  /** Shows a cited action in the story view (loading it if it is older than what is shown). */
  jumpTo: (actionId: string) => void;
}

export function slug(name: string): string {
  return name.toLowerCase().replace(/\s+/g, '-');
}

/**
 * A heading over a list, or over the sentence that says what its emptiness means: the shape of
 * every part of the manifest and of the last turn's decisions. `children` renders one item's
 * `<li>` (with its key).
 */
export function TitledList<T>(props: {
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
export function useChanges(after: () => Promise<unknown>) {
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

export function Failure(props: { error: string | null }) {
  return props.error ? (
    <p role="alert" class="error">
      {props.error}
    </p>
  ) : null;
}
