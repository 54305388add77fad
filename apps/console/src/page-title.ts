import { useEffect } from 'react';

/** Sets the tab's title for the page shown, so that screen readers and the history name each page. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · API keys console`;
  }, [title]);
}
