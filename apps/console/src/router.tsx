import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';

/** The console's own routes live under /ui (the API answers every /ui path with the app: SPA fallback). */
export const BASE = '/ui';

export interface Location {
  /** Path below /ui, starting with '/'. */
  path: string;
  query: URLSearchParams;
}

const read = (): Location => {
  const path = window.location.pathname.startsWith(BASE)
    ? window.location.pathname.slice(BASE.length) || '/'
    : '/';
  return { path, query: new URLSearchParams(window.location.search) };
};

const LocationContext = createContext<Location>(read());

/** Goes to a console path (below /ui) without reloading; `replace` keeps history clean for filter changes. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function RouterProvider({ children }: { children: ComponentChildren }) {
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const update = (): void => setLocation(read());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return <LocationContext.Provider value={location}>{children}</LocationContext.Provider>;
}

export const useLocation = (): Location => useContext(LocationContext);

/** An in-app link: a real <a href> (open in new tab works), handled without a reload on a plain click. */
export function Link({
  to,
  children,
  class: className,
  ...rest
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | undefined;
}) {
  return (
    <a
      href={`${BASE}${to}`}
      class={className}
      {...rest}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
