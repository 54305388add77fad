import { useId, useRef, useState } from 'react';

/**
 * A key's secret, shown this once: the API never returns it again. It lives in this component's state only, so
 * leaving the page discards it. The copy button uses the clipboard API; where that is refused, the text is selected
 * for the user to copy.
 */
export function SecretReveal({ secret, keyName }: { secret: string; keyName: string }) {
  const inputId = useId();
  const warningId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('copied');
    } catch {
      input.current?.select();
      setCopied('failed');
    }
  }

  return (
    <section className="secret" aria-labelledby={`${inputId}-heading`}>
      <h2 id={`${inputId}-heading`}>Copy the secret now</h2>
      <p id={warningId} className="notice notice-warning">
        This is the only time the secret of “{keyName}” is shown. It cannot be retrieved later: store it somewhere safe
        before you leave this page.
      </p>
      <label htmlFor={inputId}>Secret</label>
      <div className="secret-row">
        <input
          ref={input}
          id={inputId}
          className="secret-value"
          readOnly
          value={secret}
          aria-describedby={warningId}
          spellCheck={false}
          autoComplete="off"
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" className="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" className="muted">
        {copied === 'copied' ? 'Copied to the clipboard.' : null}
        {copied === 'failed' ? 'Copying was refused: the secret is selected, copy it with Ctrl+C (⌘C).' : null}
      </p>
    </section>
  );
}
