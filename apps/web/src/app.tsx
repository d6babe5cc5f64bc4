import { useEffect, useState } from 'preact/hooks';
import {
  api,
  describeError,
  exportAdventure,
  request,
  storeKey,
  storedKey,
  takeKeyFromFragment,
  whenUnauthorized,
  type AdventureSummary,
} from './api';
import { NewAdventure } from './new-adventure';
import { Play } from './play';
import { adventureHref, navigate, useAdventureRoute } from './router';

export function App() {
  const [key, setKey] = useState<string | null>(() => {
    const fromLink = takeKeyFromFragment();
    if (fromLink) storeKey(fromLink);
    return storedKey();
  });
  const [notice, setNotice] = useState<string | null>(null);
  const adventure = useAdventureRoute();

  useEffect(() => {
    // The sign-in link opened in a tab that already shows the client changes only the fragment.
    const onHash = () => {
      const fromLink = takeKeyFromFragment();
      if (fromLink) {
        storeKey(fromLink);
        setKey(fromLink);
        setNotice(null);
      }
    };
    addEventListener('hashchange', onHash);
    whenUnauthorized(() => {
      storeKey(null);
      setKey(null);
      setNotice('The server refused this API key; sign in with a current one.');
    });
    return () => removeEventListener('hashchange', onHash);
  }, []);

  const signOut = () => {
    storeKey(null);
    setKey(null);
    setNotice('Signed out.');
    navigate('/');
  };

  if (!key) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(k) => {
          storeKey(k);
          setKey(k);
          setNotice(null);
        }}
      />
    );
  }
  return (
    <div class="shell">
      <header class="topbar">
        <a
          class="brand"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            navigate('/');
          }}
        >
          Chronicle
        </a>
        <nav class="topnav">
          <a href="/docs" target="_blank" rel="noopener">
            API docs
          </a>
          <button type="button" class="ghost" onClick={signOut}>
            Sign out
          </button>
        </nav>
      </header>
      <main class="content">
        {adventure ? <Play key={adventure} id={adventure} /> : <Adventures />}
      </main>
    </div>
  );
}

function SignIn(props: { notice: string | null; onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = key.trim();
    if (!candidate) return setError('Paste an API key (npm start prints a development key).');
    setBusy(true);
    setError(null);
    try {
      // Checked against the server before it is kept.
      await request('GET', '/v1/adventures?limit=1', undefined, { key: candidate });
      props.onSignedIn(candidate);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <form class="card" onSubmit={submit}>
        <h1>Chronicle</h1>
        <p class="muted">Sign in with your API key. It is kept in this browser only.</p>
        {props.notice && <p role="status">{props.notice}</p>}
        <label>
          API key
          <input
            type="password"
            autoComplete="off"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            placeholder="chr_…"
          />
        </label>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

function Adventures() {
  const [list, setList] = useState<AdventureSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const load = async () => {
    setError(null);
    try {
      const all: AdventureSummary[] = [];
      let after: string | null = null;
      do {
        const page: { adventures: AdventureSummary[]; next: string | null } = await api.get(
          `/v1/adventures?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`,
        );
        all.push(...page.adventures);
        after = page.next;
      } while (after);
      setList(all);
    } catch (e) {
      setError(describeError(e));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const importFile = async (file: File) => {
    setNotice(null);
    setError(null);
    try {
      const imported = await request<{ adventureId: string; events: number }>(
        'POST',
        '/v1/adventures/import',
        await file.text(),
        { contentType: 'application/x-ndjson' },
      );
      setNotice(`Imported ${file.name}: ${imported.events} events.`);
      await load();
    } catch (e) {
      setError(`Import failed: ${describeError(e)}`);
    }
  };

  if (creating) {
    return (
      <NewAdventure
        onCancel={() => setCreating(false)}
        onCreated={(id) => navigate(adventureHref(id))}
      />
    );
  }
  return (
    <section class="adventures">
      <div class="row spread">
        <h1>Adventures</h1>
        <div class="row">
          <ImportButton onFile={(file) => void importFile(file)} />
          <button type="button" onClick={() => setCreating(true)}>
            New adventure
          </button>
        </div>
      </div>
      {notice && <p role="status">{notice}</p>}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {list === null && !error && <p class="muted">Loading adventures…</p>}
      {list !== null && list.length === 0 && (
        <p class="empty">No adventures yet. Start one with “New adventure”, or import a file.</p>
      )}
      {list !== null && list.length > 0 && <AdventureList list={list} onError={setError} />}
    </section>
  );
}

function ImportButton(props: { onFile: (file: File) => void }) {
  return (
    <label class="button secondary file">
      Import adventure
      <input
        type="file"
        accept=".ndjson,application/x-ndjson,text/plain"
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.value = '';
          if (file) props.onFile(file);
        }}
      />
    </label>
  );
}

function AdventureList(props: { list: AdventureSummary[]; onError: (message: string) => void }) {
  return (
    <ul class="list">
      {props.list.map((a) => (
        <li key={a.id} class="list-item">
          <a
            href={adventureHref(a.id)}
            onClick={(e) => {
              e.preventDefault();
              navigate(adventureHref(a.id));
            }}
          >
            {a.title || 'Untitled'}
          </a>
          <span class="muted small">version {a.version}</span>
          <button
            type="button"
            class="secondary small"
            aria-label={`Export ${a.title || 'Untitled'}`}
            onClick={() => void exportAdventure(a).catch((e) => props.onError(describeError(e)))}
          >
            Export
          </button>
        </li>
      ))}
    </ul>
  );
}
