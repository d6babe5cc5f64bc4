// The turn being narrated, followed over its stream: the live text, the scripts' notes, and the
// story as the log has it once the turn ends.
import { useRef, useState } from 'preact/hooks';
import { authHeaders, describeError, errorFrom, type AdventureView } from './api';
import { followStream, type ReceivedFrame } from './sse';

export type Mode = 'do' | 'say' | 'story';

/** The turn being narrated right now, as the stream has delivered it so far. */
export interface LiveTurn {
  turnId: string;
  kind: 'action' | 'continue' | 'retry';
  player: { type: Mode; text: string } | null;
  text: string;
  reconnecting: boolean;
}

/**
 * What the scripts told the player during the latest turn: a `notice` (a script failed, or its
 * context change was discarded), a script's `message`, or the message of a script that stopped
 * the turn. Kept after the turn ends, until the next one starts: a notice that comes with the
 * last frame would otherwise vanish with the live text before anyone could read it.
 */
export interface TurnNote {
  kind: 'notice' | 'message' | 'stopped';
  text: string;
}

export function useTurn(
  story: { fetchView: () => Promise<AdventureView>; replace: (fresh: AdventureView) => void },
  onFailure: (message: string) => void,
) {
  const [turn, setTurn] = useState<LiveTurn | null>(null);
  const [notes, setNotes] = useState<TurnNote[]>([]);
  const following = useRef<AbortController | null>(null);

  const onFrame = (frame: ReceivedFrame) => {
    if (frame.event === 'player') {
      // The action as the server wrote it into the story ("> You climb the stairs.").
      const written = frame.data.action?.text;
      if (written)
        setTurn((t) => t && t.player && { ...t, player: { ...t.player, text: written } });
    } else if (frame.event === 'chunk') {
      const { text } = frame.data;
      setTurn((t) => t && { ...t, text: t.text + text, reconnecting: false });
    } else if (frame.event === 'reset') {
      setTurn((t) => t && { ...t, text: '', reconnecting: false });
    } else if (frame.event === 'notice' || frame.event === 'message') {
      // This client plays as the adventure's one player, so a message's `visibleTo`
      // (AI Dungeon's multiplayer names) names no one else who could be left out.
      const note = { kind: frame.event, text: frame.data.text };
      setNotes((n) => [...n, note]);
    }
  };

  async function follow(
    turnId: string,
    stream: string,
    kind: LiveTurn['kind'],
    player: LiveTurn['player'],
  ) {
    following.current?.abort();
    const controller = new AbortController();
    following.current = controller;
    setTurn({ turnId, kind, player, text: '', reconnecting: false });
    setNotes([]);
    let failure: string | null = null;
    try {
      const last = await followStream({
        url: stream,
        headers: authHeaders(),
        signal: controller.signal,
        onRefused: errorFrom,
        onReconnect: () => setTurn((t) => t && { ...t, reconnecting: true }),
        onFrame,
      });
      if (last?.event === 'error') {
        failure = last.data.cancelled
          ? 'The turn was cancelled.'
          : `The narrator failed: ${last.data.message ?? 'no reason given'}. Retry or try again.`;
      } else if (last?.event === 'stopped') {
        // The stop's message is mostly the script's `state.message`, already shown as it came.
        const { message } = last.data;
        setNotes((n) =>
          n.some((note) => note.kind === 'message' && note.text === message)
            ? n
            : [...n, { kind: 'stopped', text: message || 'A script stopped the turn.' }],
        );
      }
    } catch (e) {
      failure = describeError(e);
    }
    if (controller.signal.aborted) return;
    // The story as the log now has it replaces the streamed text in one render: no jump.
    const fresh = await story.fetchView().catch(() => null);
    if (fresh) story.replace(fresh);
    setTurn(null);
    following.current = null;
    if (failure) onFailure(failure);
  }

  return { turn, notes, follow, stop: () => following.current?.abort() };
}

export type Turns = ReturnType<typeof useTurn>;
