import { useEffect, useState } from 'preact/hooks';

// Two screens have addresses of their own — the list (`/`) and an adventure
// (`/?adventure=<id>`) — so a reload or a shared link opens the same screen. The adventure is
// in the query, not the path: every address of the client is `/`, one of the few paths the API
// serves without a key.

export function adventureHref(id: string): string {
  return `/?adventure=${encodeURIComponent(id)}`;
}

export function navigate(href: string): void {
  if (location.pathname + location.search === href) return;
  history.pushState(null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The adventure the address names, or null on the list. */
export function useAdventureRoute(): string | null {
  const read = () => new URLSearchParams(location.search).get('adventure');
  const [id, setId] = useState(read);
  useEffect(() => {
    const update = () => setId(read());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return id;
}
