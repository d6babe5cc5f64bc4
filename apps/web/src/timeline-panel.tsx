// The Timeline tab: the Version slider over the adventure's history, and its event log.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, describeError, type AtVersion, type LoggedEvent } from './api';
import { type PanelProps, Failure } from './inspect.shared';

export function TimelinePanel(props: PanelProps & { onBranched: () => Promise<void> }) {
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
      <VersionSlider version={version} latest={latest} onVersion={setVersion} />
      <Failure error={error} />
      {at && at.version === version ? (
        <AtVersionView
          at={at}
          canBranch={!props.busy && version !== latest && !!at.head}
          branch={() => void branch()}
        />
      ) : (
        <p class="muted">Loading version {version}…</p>
      )}
      <h3>Event log</h3>
      {events === null && !error && <p class="muted">Loading…</p>}
      {events !== null && <EventLog events={events} version={version} onVersion={setVersion} />}
      {next !== null && (
        <button type="button" class="secondary small" onClick={() => void loadEvents(next, true)}>
          More events
        </button>
      )}
    </div>
  );
}

/** The newest actions of the adventure as it was at a version, and the branch from there. */
function AtVersionView(props: { at: AtVersion; canBranch: boolean; branch: () => void }) {
  const { at } = props;
  return (
    <div class="at" aria-label={`The adventure at version ${at.version}`}>
      <div class="row spread">
        <span class="muted small">
          {at.actions.length} newest actions at version {at.version}
        </span>
        <button
          type="button"
          class="secondary small"
          disabled={!props.canBranch}
          onClick={props.branch}
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
  );
}

function EventLog(props: {
  events: LoggedEvent[];
  version: number;
  onVersion: (version: number) => void;
}) {
  return (
    <ol class="events" aria-label="Event log">
      {props.events.map((e) => (
        <li key={e.id} class={e.version === props.version ? 'current' : ''}>
          <button type="button" class="ghost small" onClick={() => props.onVersion(e.version)}>
            {e.version}
          </button>{' '}
          <strong>{e.type}</strong>{' '}
          <span class="muted small">{new Date(e.recordedAt).toLocaleTimeString()}</span>
        </li>
      ))}
    </ol>
  );
}

function VersionSlider(props: {
  version: number;
  latest: number;
  onVersion: (version: number) => void;
}) {
  // The output stands outside the label: inside it, the slider's accessible name would read
  // "Version 5 / 7" instead of the "Version" the README promises.
  return (
    <div class="slider">
      <label>
        Version
        <input
          type="range"
          min={1}
          max={props.latest}
          value={props.version}
          onInput={(e) => props.onVersion(Number(e.currentTarget.value))}
        />
      </label>
      <output aria-label="Version shown">
        {props.version} / {props.latest}
      </output>
    </div>
  );
}
