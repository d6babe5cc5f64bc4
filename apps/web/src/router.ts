import { useEffect, useState } from 'preact/hooks';

// Two screens have addresses of their own (the list, and an adventure), so a reload or a
// shared link opens the same screen. The API answers any other path with index.html.

export function navigate(path: string): void {
  if (location.pathname === path) return;
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}
