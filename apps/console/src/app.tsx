import { useEffect, useRef, useState } from 'preact/hooks';
import { onUnauthorized } from './api';
import { Link, navigate, RouterProvider, useLocation } from './router';
import { type Identity, session } from './session';
import { HistoryPage } from './pages/history';
import { JobPage } from './pages/job';
import { NodesPage } from './pages/nodes';
import { OverviewPage } from './pages/overview';
import { QueuePage } from './pages/queue';
import { SignIn } from './pages/sign-in';
import { TeamsPage } from './pages/teams';
import { UsagePage } from './pages/usage';

const NAV = [
  { to: '/', label: 'Overview' },
  { to: '/queue', label: 'Queue' },
  { to: '/teams', label: 'Teams' },
  { to: '/nodes', label: 'Nodes' },
  { to: '/usage', label: 'Usage' },
  { to: '/history', label: 'History' },
] as const;

export function App() {
  return (
    <RouterProvider>
      <Shell />
    </RouterProvider>
  );
}

function Shell() {
  const [identity, setIdentity] = useState<Identity | null>(() => session.identity());
  const [signedOutBecause, setSignedOutBecause] = useState<string | null>(null);
  useEffect(
    () =>
      onUnauthorized((detail) => {
        session.clear();
        setIdentity(null);
        setSignedOutBecause(
          `The API no longer accepts your token (${detail}). Sign in again with a valid token.`,
        );
      }),
    [],
  );
  if (identity === null) {
    return (
      <SignIn
        notice={signedOutBecause}
        onSignedIn={(who) => {
          setSignedOutBecause(null);
          setIdentity(who);
        }}
      />
    );
  }
  return (
    <Layout
      identity={identity}
      onSignOut={() => {
        session.clear();
        setIdentity(null);
        navigate('/', { replace: true });
      }}
    />
  );
}

function Layout({ identity, onSignOut }: { identity: Identity; onSignOut: () => void }) {
  const { path } = useLocation();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  // After an in-app navigation, move focus to the page (screen readers announce it; Tab starts there).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector('h1')?.focus();
  }, [path]);
  const section = '/' + (path.split('/')[1] ?? '');
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link to="/" class="brand">
          Quartermaster
        </Link>
        <nav aria-label="Console">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link
                  to={n.to}
                  aria-current={
                    (
                      n.to === '/'
                        ? path === '/'
                        : section === n.to || (n.to === '/queue' && section === '/jobs')
                    )
                      ? 'page'
                      : undefined
                  }
                >
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span
            title={
              identity.role === 'admin'
                ? 'admin: every team'
                : `member of ${identity.teams.join(', ') || 'no team'}`
            }
          >
            {identity.subject} <span class="badge">{identity.role}</span>
          </span>
          <button type="button" class="link" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main}>
        <Page path={path} identity={identity} />
      </main>
    </>
  );
}

function Page({ path, identity }: { path: string; identity: Identity }) {
  const parts = path.split('/').filter(Boolean);
  switch (parts[0]) {
    case undefined:
      return <OverviewPage identity={identity} />;
    case 'queue':
      return <QueuePage identity={identity} />;
    case 'jobs':
      return parts[1] ? (
        <JobPage id={decodeURIComponent(parts[1])} identity={identity} />
      ) : (
        <QueuePage identity={identity} />
      );
    case 'teams':
      return <TeamsPage identity={identity} />;
    case 'nodes':
      return <NodesPage />;
    case 'usage':
      return <UsagePage identity={identity} />;
    case 'history':
      return <HistoryPage identity={identity} />;
    default:
      return (
        <section>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            There is no console page at <code>/ui{path}</code>. <Link to="/">Go to the overview</Link>.
          </p>
        </section>
      );
  }
}
