// The one place that cuts credentials out of what the gateway logs about a request: URLs
// (access log, error logs) here, headers through the logger's redact paths (REDACT_PATHS in
// packages/shared logger.ts, which name every credential header the API reads or a client may
// send by mistake).

/** Query parameters whose value is a credential whatever it looks like (`?token=…`, `?api_key=…`). */
const SECRET_PARAM =
  /^(?:.*[_-])?(?:token|key|apikey|secret|password|passwd|authorization|auth|credentials?|signature|sig)$/i;
/** API keys (`sak_live_…`) and generated admin tokens (`sa_admin_…`): their prefix is kept. */
const CREDENTIAL = /(sak_live_[0-9A-Za-z]{3}|sa_admin_)[0-9A-Za-z_-]+/g;
const REDACTED = '[redacted]';

/**
 * Cuts credentials from URLs before they are logged: every known secret (the admin token, as
 * sent or percent-encoded), anything shaped like an API key or a generated admin token (kept
 * to its display prefix), and the value of any query parameter named like a credential.
 * A URL holding none of them (nearly all) costs a few `includes`.
 */
export class LogRedactor {
  private readonly secrets: string[];

  constructor(secrets: readonly string[] = []) {
    const variants = secrets
      .filter((s) => s.length >= 8)
      .flatMap((s) => [s, encodeURIComponent(s)]);
    // Longest first, so a secret is never cut only in part.
    this.secrets = [...new Set(variants)].sort((a, b) => b.length - a.length);
  }

  /** The URL (or path) with its credentials replaced by `[redacted]`. */
  url(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    if (out.includes('sak_live_') || out.includes('sa_admin_')) {
      out = out.replace(CREDENTIAL, `$1…${REDACTED}`);
    }
    const at = out.indexOf('?');
    if (at < 0) return out;
    const query = out
      .slice(at + 1)
      .split('&')
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq < 0 || eq === pair.length - 1) return pair;
        return SECRET_PARAM.test(paramName(pair.slice(0, eq)))
          ? `${pair.slice(0, eq)}=${REDACTED}`
          : pair;
      })
      .join('&');
    return `${out.slice(0, at)}?${query}`;
  }
}

function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
