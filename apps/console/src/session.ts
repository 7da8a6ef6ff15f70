/** Who is signed in, as GET /v1/whoami says. */
export interface Identity {
  subject: string;
  role: 'admin' | 'member';
  teams: string[];
}

const TOKEN = 'qm.console.token';
const IDENTITY = 'qm.console.identity';

/**
 * The signed-in token lives in this tab's sessionStorage only: gone when the tab closes, never in the
 * URL, never in localStorage or a cookie.
 */
export const session = {
  token(): string | null {
    return sessionStorage.getItem(TOKEN);
  },
  identity(): Identity | null {
    const raw = sessionStorage.getItem(IDENTITY);
    if (raw === null || this.token() === null) return null;
    try {
      return JSON.parse(raw) as Identity;
    } catch {
      return null;
    }
  },
  save(token: string, identity: Identity): void {
    sessionStorage.setItem(TOKEN, token);
    sessionStorage.setItem(IDENTITY, JSON.stringify(identity));
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(IDENTITY);
  },
};
