import { Route, Routes } from 'react-router';
import { Layout } from './components/layout.js';
import { CreateKey } from './pages/create-key.js';
import { KeyPage } from './pages/key-page.js';
import { KeysList } from './pages/keys-list.js';
import { NotFound } from './pages/not-found.js';
import { SignIn } from './pages/sign-in.js';
import { useSignedIn } from './session.js';

/**
 * The console's pages, under /console: the keys list (`/`, its filters and cursor in the query string), a key
 * (`/keys/:keyId`) and the creation form (`/keys/new`). Signed out, every address shows the sign-in form and then
 * the page it names, so that a bookmarked or shared link works after signing in.
 */
export function App() {
  if (!useSignedIn()) {
    return <SignIn />;
  }
  return (
    <Layout>
      <Routes>
        <Route index element={<KeysList />} />
        <Route path="keys/new" element={<CreateKey />} />
        <Route path="keys/:keyId" element={<KeyPage />} />
        <Route path="*" element={<NotFound />} />
      </Routes>
    </Layout>
  );
}
