// Where the player writes the next action, and the turn's buttons (continue, retry, undo, redo,
// cancel).
import type { Moves } from './play';
import type { LiveTurn, Mode } from './use-turn';

const MODES: Array<{ mode: Mode; label: string; hint: string }> = [
  { mode: 'do', label: 'Do', hint: 'What do you do?' },
  { mode: 'say', label: 'Say', hint: 'What do you say?' },
  { mode: 'story', label: 'Story', hint: 'Write what happens next.' },
];

interface ActionBoxProps {
  mode: Mode;
  input: string;
  turn: LiveTurn | null;
  busy: boolean;
  canRetry: boolean;
  canRedo: boolean;
  onMode: (mode: Mode) => void;
  onInput: (text: string) => void;
  send: (type: Mode | 'continue') => void;
  moves: Pick<Moves, 'retry' | 'undo' | 'redo' | 'cancel'>;
}

export function ActionBox(props: ActionBoxProps) {
  const { mode, turn } = props;
  const inFlight = turn !== null;
  return (
    <form
      class="action-box"
      onSubmit={(e) => {
        e.preventDefault();
        props.send(mode);
      }}
    >
      <div class="modes" role="radiogroup" aria-label="Mode">
        {MODES.map((m) => (
          <label key={m.mode} class={`mode ${mode === m.mode ? 'on' : ''}`}>
            <input
              type="radio"
              name="mode"
              value={m.mode}
              checked={mode === m.mode}
              disabled={inFlight}
              onChange={() => props.onMode(m.mode)}
            />
            {m.label}
          </label>
        ))}
      </div>
      <textarea
        aria-label="Action"
        rows={2}
        value={props.input}
        disabled={inFlight}
        placeholder={MODES.find((m) => m.mode === mode)?.hint}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            props.send(mode);
          }
        }}
      />
      <TurnButtons {...props} />
    </form>
  );
}

/** Send, and the turn's other moves: each waits while a turn is in flight or a move is sent. */
function TurnButtons(props: ActionBoxProps) {
  const { turn, moves } = props;
  const waiting = turn !== null || props.busy;
  return (
    <div class="row wrap buttons">
      <button type="submit" disabled={waiting}>
        Send
      </button>
      <button
        type="button"
        class="secondary"
        disabled={waiting}
        onClick={() => props.send('continue')}
      >
        Continue
      </button>
      <button
        type="button"
        class="secondary"
        disabled={waiting || !props.canRetry}
        onClick={() => void moves.retry()}
      >
        Retry
      </button>
      <button type="button" class="secondary" disabled={waiting} onClick={() => void moves.undo()}>
        Undo
      </button>
      <button
        type="button"
        class="secondary"
        disabled={waiting || !props.canRedo}
        onClick={() => void moves.redo()}
      >
        Redo
      </button>
      {turn && (
        <span class="muted small" role="status">
          {turn.reconnecting ? 'Connection lost; reconnecting…' : 'The narrator is writing…'}
        </span>
      )}
      {turn && (
        <button type="button" class="danger" onClick={() => void moves.cancel(turn.turnId)}>
          Cancel
        </button>
      )}
    </div>
  );
}
