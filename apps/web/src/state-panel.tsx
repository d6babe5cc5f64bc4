// The State tab: the referee's decisions of the last turn and the form that corrects the state.
import { useState } from 'preact/hooks';
import { api, describeError, type AdventureView, type NarrativeState } from './api';
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

/** The correction the form describes, as PATCH …/narrative-state takes it. */
function correctionOf(op: Op, fields: Record<string, string>): Record<string, unknown> {
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
  return correction;
}

/** The tab's outcome line: why the last change failed, or that it was made. */
type Outcome = {
  error: (message: string | null) => void;
  notice: (message: string | null) => void;
};

export function StatePanel(props: PanelProps) {
  const { view } = props;
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const outcome: Outcome = { error: setError, notice: setNotice };
  return (
    <div>
      <NarrativeTable state={view.narrativeState} />
      <h3>Last turn</h3>
      {view.lastNarration ? (
        <Decisions {...props} last={view.lastNarration} outcome={outcome} />
      ) : (
        <p class="empty">No narration yet.</p>
      )}
      <h3>Correct the state</h3>
      <CorrectionForm {...props} outcome={outcome}>
        <Failure error={error} />
        {notice && <p role="status">{notice}</p>}
      </CorrectionForm>
    </div>
  );
}

/** What the referee accepted (each can be retconned) and rejected, with its reasons. */
function Decisions(
  props: PanelProps & {
    last: NonNullable<AdventureView['lastNarration']>;
    outcome: Outcome;
  },
) {
  const { last, outcome } = props;
  const retcon = async (index: number) => {
    outcome.error(null);
    try {
      await api.post(`${props.base}/narrative-state/retcons`, { actionId: last.actionId, index });
      outcome.notice('Retconned.');
      await props.onChanged();
    } catch (e) {
      outcome.error(describeError(e));
    }
  };
  return (
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
  );
}

/** One correction at a time: its kind, then the fields that kind takes. */
function CorrectionForm(
  props: PanelProps & { outcome: Outcome; children: preact.ComponentChildren },
) {
  const { outcome } = props;
  const [op, setOp] = useState<Op>('setStatus');
  const [fields, setFields] = useState<Record<string, string>>({});
  const correct = async (event: Event) => {
    event.preventDefault();
    outcome.error(null);
    outcome.notice(null);
    try {
      const corrections = [correctionOf(op, fields)];
      await api.patch(`${props.base}/narrative-state`, { corrections });
      setFields({});
      outcome.notice('Corrected.');
      await props.onChanged();
    } catch (e) {
      outcome.error(describeError(e));
    }
  };
  return (
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
      {props.children}
      <button type="submit" disabled={props.busy}>
        Apply correction
      </button>
    </form>
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
