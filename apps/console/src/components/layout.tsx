import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useSession } from '../session.js';

/** The frame of every signed-in page: a skip link, the navigation, sign-out, and the page in `<main>`. */
export function Layout({ children }: { children: ReactNode }) {
  const { signOut } = useSession();
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
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
