import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { type Identity, session } from '../session';

/**
 * Sign-in with an API token (the same tokens as the REST API: `POST /v1/tokens`, or QM_ADMIN_TOKEN).
 * The token is checked with GET /v1/whoami and kept in this tab's sessionStorage only.
 */
export function SignIn({
  onSignedIn,
  notice,
}: {
  onSignedIn: (who: Identity) => void;
  notice: string | null;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const value = token.trim();
    if (value === '') {
      setError('Paste your API token first.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const who = await api<Identity>('/v1/whoami', { token: value });
      session.save(value, { subject: who.subject, role: who.role, teams: who.teams });
      onSignedIn(who);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        setError(
          `This token was not accepted: ${err.detail}. Check that you copied the whole token, or ask your infra lead for a new one.`,
        );
      } else if (err instanceof ApiError) {
        setError(`Could not sign in: ${err.detail}`);
      } else {
        setError(`Could not sign in: ${String(err)}`);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="signin">
      <h1>Quartermaster</h1>
      <p class="muted">GPU-cluster scheduler — where is my job, why, and what is the cluster doing.</p>
      {notice && (
        <div class="note warn" role="status">
          {notice}
        </div>
      )}
      <form onSubmit={(e) => void submit(e)} noValidate>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-describedby={error ? 'token-error token-help' : 'token-help'}
          aria-invalid={error ? true : undefined}
          autoFocus
        />
        <p id="token-help" class="muted small">
          The same token as for the REST API and the CLI. It stays in this browser tab only and is forgotten
          when you close it.
        </p>
        {error && (
          <p id="token-error" class="note error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
