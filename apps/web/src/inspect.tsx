import { useRef, useState } from 'preact/hooks';
import { type AdventureView } from './api';
import { type PanelProps, slug } from './inspect.shared';
import { CardsPanel } from './cards-panel';
import { ContextPanel, type DraftAction } from './context-panel';
import { MemoriesPanel } from './memories-panel';
import { StatePanel } from './state-panel';
import { TimelinePanel } from './timeline-panel';

const TABS = ['Context', 'State', 'Memories', 'Story cards', 'Timeline'] as const;
type Tab = (typeof TABS)[number];

/** What the engine did and knows, beside the story: one tab per part. */
export function Inspect(props: {
  adventureId: string;
  view: AdventureView;
  busy: boolean;
  /** The action being typed, which the Context tab's dry run supposes. */
  draft: DraftAction | null;
  onChanged: () => Promise<void>;
  onBranched: () => Promise<void>;
  jumpTo: (actionId: string) => void;
}) {
  const [tab, setTab] = useState<Tab>('Context');
  const base = `/v1/adventures/${encodeURIComponent(props.adventureId)}`;
  const panel: PanelProps = {
    base,
    view: props.view,
    busy: props.busy,
    onChanged: props.onChanged,
    jumpTo: props.jumpTo,
  };
  const tabs = useRef<HTMLDivElement>(null);
  const onKey = (e: KeyboardEvent) => {
    const at = TABS.indexOf(tab);
    const next = e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : null;
    if (next === null) return;
    const chosen = TABS[(next + TABS.length) % TABS.length];
    setTab(chosen);
    tabs.current?.querySelector<HTMLElement>(`[data-tab="${chosen}"]`)?.focus();
  };
  return (
    <aside class="inspect" aria-label="Inspect">
      <div class="tabs" role="tablist" aria-label="Inspect" ref={tabs} onKeyDown={onKey}>
        {TABS.map((name) => (
          <button
            key={name}
            type="button"
            role="tab"
            data-tab={name}
            id={`tab-${slug(name)}`}
            aria-selected={tab === name}
            aria-controls={`panel-${slug(name)}`}
            tabIndex={tab === name ? 0 : -1}
            onClick={() => setTab(name)}
          >
            {name}
          </button>
        ))}
      </div>
      <div
        class="panel"
        role="tabpanel"
        id={`panel-${slug(tab)}`}
        aria-labelledby={`tab-${slug(tab)}`}
      >
        {tab === 'Context' && <ContextPanel {...panel} draft={props.draft} />}
        {tab === 'State' && <StatePanel {...panel} />}
        {tab === 'Memories' && <MemoriesPanel {...panel} />}
        {tab === 'Story cards' && <CardsPanel {...panel} />}
        {tab === 'Timeline' && <TimelinePanel {...panel} onBranched={props.onBranched} />}
      </div>
    </aside>
  );
}
