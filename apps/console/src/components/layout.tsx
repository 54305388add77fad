import { type ReactNode, type RefObject, useEffect, useRef } from 'react';
import { NavLink, useLocation } from 'react-router';
import { useLastSessionChange, useSession } from '../session.js';

/**
 * Moves the keyboard focus to `<main>` when the address changes (a link followed, a filter applied, a page turned),
 * so that the next Tab starts in the new page and a screen reader reads it, rather than from a control that is gone.
 * The first address of the tab keeps the browser's own start, so that Tab reaches the skip link first; after a
 * sign-in, `<main>` takes the focus too.
 */
function useFocusOnNavigation(): RefObject<HTMLElement | null> {
  const main = useRef<HTMLElement>(null);
  const location = useLocation();
  const lastChange = useLastSessionChange();
  // Just signed in: the sign-in form that had the focus is gone, so the page takes it.
  useEffect(() => {
    if (lastChange === 'signed-in') {
      main.current?.focus();
    }
  }, [lastChange]);
  // The address last focused for, rather than a first-render flag: StrictMode runs effects twice in development.
  const shown = useRef(location.key);
  useEffect(() => {
    if (shown.current === location.key) {
      return;
    }
    shown.current = location.key;
    main.current?.focus();
  }, [location.key]);
  return main;
}

/** The frame of every signed-in page: a skip link, the navigation, sign-out, and the page in `<main>`. */
export function Layout({ children }: { children: ReactNode }) {
  const { signOut } = useSession();
  const main = useFocusOnNavigation();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <p className="brand">API keys console</p>
        <nav aria-label="Main">
          <ul className="nav-list">
            <li>
              <NavLink to="/" end>
                Keys
              </NavLink>
            </li>
            <li>
              <NavLink to="/keys/new">Create a key</NavLink>
            </li>
          </ul>
        </nav>
        <button type="button" className="button button-secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
