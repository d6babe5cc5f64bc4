// The story the Play screen shows: the adventure at its head with its newest page of actions,
// the earlier pages the reader asked for, and the action a citation jumped to.
import { useState } from 'preact/hooks';
import { api, describeError, type ActionView, type AdventureView } from './api';

const EARLIER_PAGE = 100;
/** The API's largest page (ACTIONS_PAGE_MAX): a jump far back loads the story in few requests. */
const JUMP_PAGE = 240;

/** The action a jump landed on; `seq` tells a second jump to the same action from the first. */
export interface JumpTarget {
  id: string;
  seq: number;
}

export function useStory(base: string, onError: (message: string) => void) {
  const [view, setView] = useState<AdventureView | null>(null);
  const [earlier, setEarlier] = useState<ActionView[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [jumped, setJumped] = useState<JumpTarget | null>(null);

  const fetchView = () => api.get<AdventureView>(base);

  /** The story as the log now has it, from its newest page again (a jump's mark is let go). */
  const replace = (fresh: AdventureView) => {
    setView(fresh);
    setEarlier([]);
    setJumped(null);
  };

  const reload = async () => {
    try {
      const fresh = await fetchView();
      replace(fresh);
      setLoadError(null);
      return fresh;
    } catch (e) {
      setLoadError(describeError(e));
      return null;
    }
  };

  const pageBefore = (first: ActionView, limit: number) =>
    api.get<AdventureView>(`${base}?before=${encodeURIComponent(first.id)}&limit=${limit}`);

  /** Loads what `load` reads, with "Loading…" shown meanwhile; a failure is said. */
  const loading = async (load: () => Promise<void>) => {
    setLoadingEarlier(true);
    await load()
      .catch((e) => onError(describeError(e)))
      .finally(() => setLoadingEarlier(false));
  };

  const loadEarlier = () =>
    loading(async () => {
      const first = earlier[0] ?? view?.actions[0];
      if (!first) return;
      const page = await pageBefore(first, EARLIER_PAGE);
      setEarlier((e) => [...page.actions, ...e]);
      setView((v) => v && { ...v, more: page.more });
    });

  /**
   * Shows an action a report cites: loads the earlier pages down to it when it is older than
   * what is shown (as "Show earlier" would, in larger pages), then marks it for the story view
   * to scroll to and focus. An action no longer on the story's path is said so.
   */
  const jumpTo = (actionId: string) =>
    loading(async () => {
      if (!view) return;
      const shown = [...earlier, ...view.actions];
      const { loaded, more } = await downTo(actionId, shown, view.more, (first) =>
        pageBefore(first, JUMP_PAGE),
      );
      setEarlier(loaded.slice(0, loaded.length - view.actions.length));
      setView((v) => v && { ...v, more });
      if (!loaded.some((a) => a.id === actionId)) {
        throw new Error(
          'That action is no longer in the story: it was undone, erased or is on another branch.',
        );
      }
      setJumped((j) => ({ id: actionId, seq: (j?.seq ?? 0) + 1 }));
    });

  const actions = view ? [...earlier, ...view.actions] : [];
  return {
    view,
    actions,
    loadError,
    loadingEarlier,
    jumped,
    fetchView,
    replace,
    reload,
    loadEarlier,
    jumpTo,
  };
}

export type Story = ReturnType<typeof useStory>;

/** The story loaded page by page back from `loaded` until it holds the action or the opening. */
async function downTo(
  actionId: string,
  loaded: ActionView[],
  more: boolean,
  pageBefore: (first: ActionView) => Promise<AdventureView>,
) {
  while (!loaded.some((a) => a.id === actionId) && more && loaded[0]) {
    const page = await pageBefore(loaded[0]);
    loaded = [...page.actions, ...loaded];
    more = page.more;
  }
  return { loaded, more };
}
