import { type AdminClient, AuthenticationError, createAdminClient } from '@apikeys/client';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';

/**
 * Where the admin key lives while the tab is open: sessionStorage, which the browser keeps per tab and forgets when
 * the tab closes. Never localStorage, a cookie or a URL: the key must not outlive the tab nor travel with a link.
 */
const STORAGE_KEY = 'apikeys-console.admin-key';

/** What the signed-in part of the console uses: a client of this server for the admin key, and sign-out. */
export interface Session {
  client: AdminClient;
  signOut(): void;
}

interface SessionState {
  session: Session | null;
  /** Why the last session ended without the user signing out: the API's 401, for the sign-in form to show. */
  endedBy: AuthenticationError | null;
  /**
   * What last happened in this page: nothing (it loaded signed in or out), a sign-in, or a sign-out. The page that
   * appears after one takes the focus, the control used having gone; after a load, the browser's order stands.
   */
  lastChange: 'none' | 'signed-in' | 'signed-out';
  /** Checks the key with one request to this server, and keeps it for the tab if the API accepts it. */
  signIn(adminKey: string): Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

/**
 * A client of the server that served the console: the API is same-origin, so the key is sent only there (the client
 * refuses redirects, which could hand it to another origin).
 */
function clientFor(adminKey: string): AdminClient {
  return createAdminClient({ baseUrl: window.location.origin, apiKey: adminKey });
}

function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the key then lives in memory only
  }
}

function store(adminKey: string | null): void {
  try {
    if (adminKey === null) {
      window.sessionStorage.removeItem(STORAGE_KEY);
    } else {
      window.sessionStorage.setItem(STORAGE_KEY, adminKey);
    }
  } catch {
    // Storage disabled: the key lives in memory only, and a reload signs out.
  }
}

/** Holds the admin key of the tab, and clears every cached answer when it changes. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [adminKey, setAdminKey] = useState<string | null>(storedKey);
  const [endedBy, setEndedBy] = useState<AuthenticationError | null>(null);
  const [lastChange, setLastChange] = useState<SessionState['lastChange']>('none');

  const signOut = useCallback(() => {
    store(null);
    setLastChange('signed-out');
    setAdminKey(null);
    queryClient.clear();
  }, [queryClient]);

  // A 401 during the session means the key was disabled (or deleted) meanwhile: every later call would fail too, so
  // the tab forgets the key and the sign-in form says why.
  useEffect(() => {
    if (adminKey === null) {
      return;
    }
    const check = (action: { type: string; error?: unknown }) => {
      if (action.type === 'error' && action.error instanceof AuthenticationError) {
        setEndedBy(action.error);
        signOut();
      }
    };
    const unsubscribeQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated') {
        check(event.action);
      }
    });
    const unsubscribeMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated') {
        check(event.action);
      }
    });
    return () => {
      unsubscribeQueries();
      unsubscribeMutations();
    };
  }, [adminKey, queryClient, signOut]);

  const signIn = useCallback(
    async (candidate: string) => {
      const key = candidate.trim();
      await clientFor(key).apiKeys.list({ limit: 1 });
      queryClient.clear();
      store(key);
      setEndedBy(null);
      setLastChange('signed-in');
      setAdminKey(key);
    },
    [queryClient],
  );

  const value = useMemo<SessionState>(
    () => ({
      session: adminKey === null ? null : { client: clientFor(adminKey), signOut },
      endedBy,
      lastChange,
      signIn,
    }),
    [adminKey, endedBy, lastChange, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (state === null) {
    throw new Error('useSession() needs a <SessionProvider> above it');
  }
  return state;
}

/** The signed-in session, for the signed-in pages only: `App` shows the sign-in form instead when there is none. */
export function useSession(): Session {
  const { session } = useSessionState();
  if (session === null) {
    throw new Error('useSession() is for signed-in pages only');
  }
  return session;
}

/** Sign-in, for the form. */
export function useSignIn(): SessionState['signIn'] {
  return useSessionState().signIn;
}

/** The API's refusal that ended the last session, or null (signed out by the user, or never signed in). */
export function useSessionEndedBy(): AuthenticationError | null {
  return useSessionState().endedBy;
}

/** What last happened to the session in this page (see `SessionState.lastChange`). */
export function useLastSessionChange(): SessionState['lastChange'] {
  return useSessionState().lastChange;
}

/** Whether the tab holds an admin key. */
export function useSignedIn(): boolean {
  return useSessionState().session !== null;
}
