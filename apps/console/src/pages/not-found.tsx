import { Link } from 'react-router';
import { usePageTitle } from '../page-title.js';

/** A console address that names no page. */
export function NotFound() {
  usePageTitle('Page not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        The console has no page at this address. <Link to="/">Go to the keys</Link>.
      </p>
    </>
  );
}
