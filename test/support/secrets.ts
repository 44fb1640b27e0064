// Secret-leak checks over captured logs and stored data.

/** The part of an API key that is never shown: everything after the 12-character display prefix. */
export function secretPart(secret: string): string {
  return secret.startsWith('sak_') ? secret.slice(12) : secret;
}

/**
 * The secrets (masked for the report) whose hidden part occurs anywhere in `text`. API keys are
 * checked without their 12-character display prefix, so a partial leak counts too.
 */
export function leakedSecrets(text: string, secrets: Iterable<string | undefined>): string[] {
  const leaks: string[] = [];
  for (const s of secrets) {
    if (!s || s.length < 8) continue;
    if (text.includes(secretPart(s))) leaks.push(`${s.slice(0, 12)}…`);
  }
  return leaks;
}
