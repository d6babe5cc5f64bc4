// The State tab: the referee's decisions of the last turn and the form that corrects the state.
import { useState } from 'preact/hooks';
import { api, describeError, type NarrativeState } from './api';
import { type PanelProps, TitledList, Failure } from './inspect.shared';

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

export function StatePanel(props: PanelProps) {
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
