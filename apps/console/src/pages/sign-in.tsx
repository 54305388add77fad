import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ErrorNotice } from '../components/error-notice.js';
import { usePageTitle } from '../page-title.js';
import { useLastSessionChange, useSessionEndedBy, useSignIn } from '../session.js';

/** The sign-in form: an admin key, checked with one request before the console keeps it for the tab. */
export function SignIn() {
  usePageTitle('Sign in');
  const signIn = useSignIn();
  const inputId = useId();
  const helpId = useId();
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);
  const endedBy = useSessionEndedBy();
  const lastChange = useLastSessionChange();
  const input = useRef<HTMLInputElement>(null);

  // Signed out (by the user, or by the API's 401) rather than loaded: the focus goes to the field, which replaced
  // the page where Sign out was.
  useEffect(() => {
    if (lastChange === 'signed-out') {
      input.current?.focus();
    }
  }, [lastChange]);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const key = String(new FormData(event.currentTarget).get('admin-key') ?? '').trim();
    if (key === '') {
      setError(new Error('Paste an admin key (sk-adm-...).'));
      return;
    }
    setPending(true);
    setError(null);
    try {
      await signIn(key);
    } catch (caught) {
      setError(caught);
      setPending(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>API keys console</h1>
      <form onSubmit={submit} className="card" aria-busy={pending}>
        <h2>Sign in</h2>
        {error === null && endedBy !== null ? (
          <ErrorNotice error={endedBy} title="You were signed out: the API refused the admin key" />
        ) : null}
        <label htmlFor={inputId}>Admin key</label>
        {/* A text field, masked by CSS: a password field would make browsers offer to save the key. */}
        <input
          ref={input}
          id={inputId}
          name="admin-key"
          type="text"
          className="masked"
          autoComplete="off"
          autoCapitalize="off"
          autoCorrect="off"
          spellCheck={false}
          aria-describedby={helpId}
          aria-invalid={error !== null}
          required
        />
        <p id={helpId} className="muted">
          Paste an admin key (<code>sk-adm-...</code>). It is kept in this browser tab only (sessionStorage, never a
          cookie, localStorage or the address), sent only to this server, and forgotten when you sign out or close the
          tab.
        </p>
        <button type="submit" className="button" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
        {error === null ? null : <ErrorNotice error={error} title="Sign-in failed" />}
      </form>
    </main>
  );
}
