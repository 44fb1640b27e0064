import type { KbEntry } from './kb-import.js';

const entry = (id: string, question: string, answer: string, tags: string[]): KbEntry => ({
  id,
  question,
  answer,
  tags,
});

/**
 * The knowledge base of the `demo` organization, loaded on an embedded first start so search,
 * answers and MCP have something to work with. Written for this project about a fictional
 * help-desk product, "Acme Desk"; every name, limit and URL in it is made up.
 */
export const DEMO_KB: readonly KbEntry[] = [
  entry(
    'account-sign-up',
    'How do I create an Acme Desk account?',
    'Go to app.acmedesk.example/signup, enter your work email and choose a workspace name. We send a confirmation link that stays valid for 24 hours; once you click it, the workspace is ready and you are its first owner. The 14-day trial needs no credit card.',
    ['account', 'trial'],
  ),
  entry(
    'account-password-reset',
    'How do I reset my password?',
    'On the sign-in page choose "Forgot password?" and enter the email address of your account. A reset link arrives within a few minutes and works once, for 60 minutes. If nothing arrives, check the spam folder and make sure your workspace does not enforce single sign-on: SSO users change their password with their identity provider, not in Acme Desk.',
    ['account', 'password', 'sign-in'],
  ),
  entry(
    'account-password-rules',
    'What are the password requirements?',
    'Passwords need at least 12 characters. Acme Desk rejects passwords that appear in known breach lists and the last five passwords you used. There is no forced expiry; owners can require a reset for everyone under Settings → Security.',
    ['account', 'password', 'security'],
  ),
  entry(
    'account-change-email',
    'How can I change the email address of my account?',
    'Open Profile → Email, type the new address and confirm with your current password. We send a verification link to the new address; the change takes effect when you click it, and the old address gets a notice. SSO users must ask their administrator, because the identity provider owns the address.',
    ['account', 'profile'],
  ),
  entry(
    'account-two-factor',
    'How do I turn on two-factor authentication?',
    'Go to Profile → Security → Two-factor authentication and scan the QR code with any authenticator app (TOTP), then enter the six-digit code to confirm. Save the ten recovery codes shown once. Owners can make two-factor authentication mandatory for the whole workspace under Settings → Security.',
    ['account', 'security', '2fa'],
  ),
  entry(
    'account-lost-2fa',
    'I lost my phone and cannot sign in with two-factor authentication. What now?',
    'Sign in with one of your recovery codes instead of the six-digit code; each code works once. Without recovery codes, ask a workspace owner to reset your second factor under Settings → Members. If you are the only owner, contact support from your account email and we verify your identity before resetting it.',
    ['account', 'security', '2fa', 'sign-in'],
  ),
  entry(
    'account-locked',
    'Why is my account locked?',
    'After ten failed sign-in attempts in 15 minutes the account is locked for 30 minutes to stop password guessing. You can wait, or reset your password, which unlocks the account at once.',
    ['account', 'sign-in', 'security'],
  ),
  entry(
    'sso-setup',
    'How do I set up single sign-on (SSO)?',
    'SSO with SAML 2.0 or OpenID Connect is available on the Business and Enterprise plans. An owner opens Settings → Security → Single sign-on, copies the Acme Desk service-provider details into the identity provider (Okta, Microsoft Entra ID, Google Workspace and others work), then uploads the provider metadata or enters its issuer URL. Test with one account before enforcing SSO for everyone.',
    ['sso', 'security', 'saml'],
  ),
  entry(
    'sso-provisioning',
    'Does Acme Desk support SCIM user provisioning?',
    'Yes, on the Enterprise plan. Create a SCIM token under Settings → Security → Provisioning and give it to your identity provider. Users assigned there are created in Acme Desk, updated when their details change and deactivated when they are unassigned; their tickets and history stay.',
    ['sso', 'scim', 'users'],
  ),
  entry(
    'team-invite',
    'How do I invite teammates?',
    'Owners and admins open Settings → Members → Invite and enter one or more email addresses with a role. Invitations expire after 7 days and can be resent from the same page. Each accepted invitation uses one agent seat; viewers do not need a seat.',
    ['users', 'roles', 'seats'],
  ),
  entry(
    'team-roles',
    'What roles can members have?',
    'Owner: everything, including billing and deleting the workspace. Admin: settings, members, integrations and automations, but not billing. Agent: works on tickets and the knowledge base. Viewer: read-only access to tickets and reports. A workspace always keeps at least one owner.',
    ['users', 'roles'],
  ),
  entry(
    'billing-plans',
    'What plans are there and how are they billed?',
    'Starter, Business and Enterprise, billed per agent seat, monthly or yearly (yearly saves two months). Viewers are free. Plan details and current prices are on acmedesk.example/pricing; Enterprise is quoted individually.',
    ['billing', 'plans'],
  ),
  entry(
    'billing-change-plan',
    'How do I upgrade or downgrade my plan?',
    'Owners go to Settings → Billing → Change plan. Upgrades apply immediately and the difference is charged pro rata for the rest of the billing period. Downgrades take effect at the end of the current period; features of the higher plan stay available until then.',
    ['billing', 'plans'],
  ),
  entry(
    'billing-invoices',
    'Where can I find my invoices?',
    'All invoices are under Settings → Billing → Invoices as PDF, and a copy is emailed to the billing contact when each one is issued. To put a company name, address or VAT number on future invoices, edit the billing details on the same page.',
    ['billing', 'invoices'],
  ),
  entry(
    'billing-payment-methods',
    'Which payment methods do you accept?',
    'Credit and debit cards (Visa, Mastercard, American Express) on every plan. Yearly Business and Enterprise plans can also pay by bank transfer against an invoice with 30-day terms.',
    ['billing', 'payment'],
  ),
  entry(
    'billing-failed-payment',
    'What happens if a payment fails?',
    'We retry the card three times over seven days and email the billing contact each time. If every retry fails, the workspace becomes read-only until the payment method is updated under Settings → Billing; no data is deleted.',
    ['billing', 'payment'],
  ),
  entry(
    'billing-refunds',
    'Can I get a refund?',
    'Monthly plans are not refunded for the current month, but you can cancel any time and keep access until the period ends. Yearly plans cancelled within 30 days of purchase or renewal are refunded in full; after that, unused full months are credited to your account.',
    ['billing', 'refunds'],
  ),
  entry(
    'billing-cancel',
    'How do I cancel my subscription?',
    'An owner chooses Settings → Billing → Cancel subscription. The workspace stays fully usable until the end of the paid period and then becomes read-only for 30 days, so you can still export your data, before it is scheduled for deletion.',
    ['billing', 'cancel'],
  ),
  entry(
    'data-export',
    'How do I export my data?',
    'Admins open Settings → Data → Export and pick tickets, contacts, knowledge base or everything, as CSV or JSON. Large exports run in the background; we email a download link that stays valid for 7 days. Exports of the last 90 days are listed on the same page.',
    ['export', 'data'],
  ),
  entry(
    'data-import',
    'Can I import tickets from another help desk?',
    'Yes. Settings → Data → Import accepts CSV files with one ticket per row (subject, description, status, requester email, created date). Map the columns, run a dry run to see problems, then import. Attachments are not imported from CSV.',
    ['import', 'data', 'tickets'],
  ),
  entry(
    'data-retention',
    'How long do you keep my data?',
    'Tickets, contacts and knowledge-base articles are kept for as long as the workspace exists, unless you set a retention period under Settings → Data → Retention; then closed tickets older than that period are deleted every night. Backups are kept for 35 days. After a workspace is deleted, its data is gone from production at once and from backups within 35 days.',
    ['data', 'retention', 'privacy'],
  ),
  entry(
    'data-delete-workspace',
    'How do I delete my workspace and all of its data?',
    'An owner goes to Settings → Workspace → Delete workspace and confirms with their password. Deletion is final after a 7-day grace period during which an owner can still undo it. Export anything you need first.',
    ['data', 'privacy', 'account'],
  ),
  entry(
    'data-location',
    'Where is my data stored?',
    'You choose the region when the workspace is created: EU (Frankfurt) or US (Virginia). All ticket data, attachments and backups stay in that region. Moving an existing workspace to another region is possible on request for Enterprise plans.',
    ['data', 'privacy', 'gdpr'],
  ),
  entry(
    'api-keys',
    'How do I create an API key?',
    'Admins open Settings → API → Keys → New key, give it a name and pick its permissions (read tickets, write tickets, knowledge base, reports). The key is shown once, so store it in a secret manager right away. Send it as "Authorization: Bearer <key>". Revoke a key on the same page; revocation takes effect within a minute.',
    ['api', 'api-keys', 'security'],
  ),
  entry(
    'api-rate-limits',
    'What are the API rate limits?',
    'Each API key may make 600 requests per minute and each workspace 3,000 per minute across all its keys. Every response carries RateLimit headers with the remaining budget. Over the limit you get HTTP 429 with a Retry-After header: wait that many seconds, then retry with backoff.',
    ['api', 'rate-limits'],
  ),
  entry(
    'api-pagination',
    'How does pagination work in the API?',
    'List endpoints return at most 100 items and a next_cursor value. Pass it as the cursor parameter to get the next page; next_cursor is null on the last page. Cursors are stable while new records arrive, so you never see an item twice.',
    ['api', 'pagination'],
  ),
  entry(
    'webhooks-setup',
    'How do I set up webhooks?',
    'Under Settings → API → Webhooks, add an HTTPS endpoint and choose the events (ticket created, updated, solved, comment added). Acme Desk sends a JSON POST for each event and expects a 2xx answer within 10 seconds.',
    ['webhooks', 'api', 'integrations'],
  ),
  entry(
    'webhooks-verify',
    'How do I verify that a webhook really comes from Acme Desk?',
    'Each delivery has an X-AcmeDesk-Signature header: an HMAC-SHA256 of the timestamp and the raw body, keyed with the endpoint secret shown when you created the webhook. Recompute it over the raw bytes, compare in constant time, and reject deliveries whose timestamp is more than five minutes old.',
    ['webhooks', 'security'],
  ),
  entry(
    'webhooks-retries',
    'What happens when my webhook endpoint is down?',
    'Failed deliveries (timeouts, connection errors, non-2xx answers) are retried with exponential backoff for up to 24 hours. Each event has a unique id, so make your handler idempotent. After 24 hours of failures the endpoint is disabled and admins get an email; re-enable it under Settings → API → Webhooks.',
    ['webhooks', 'integrations'],
  ),
  entry(
    'integrations-slack',
    'How do I connect Acme Desk to Slack?',
    'Open Settings → Integrations → Slack and click Connect; a Slack admin approves the app. Then pick which channels receive notifications for new, urgent or reassigned tickets. Agents can reply to a ticket from Slack with the "Reply in Acme Desk" action.',
    ['integrations', 'slack', 'notifications'],
  ),
  entry(
    'integrations-email',
    'How do I turn customer emails into tickets?',
    'Every workspace has a forwarding address like support@yourworkspace.acmedesk.example. Forward your public support address to it and each new email becomes a ticket; replies in the same thread are added to it. Verify your domain under Settings → Channels → Email so replies are sent from your own address.',
    ['integrations', 'email', 'tickets'],
  ),
  entry(
    'automations-rules',
    'Can tickets be assigned automatically?',
    'Yes, with automation rules under Settings → Automations. A rule has conditions (channel, keywords, customer, priority) and actions (assign to a person or group, set priority, add tags, send a canned reply). Rules run in order when a ticket is created or updated; the first matching assignment wins.',
    ['automations', 'tickets'],
  ),
  entry(
    'sla-policies',
    'How do SLA policies work?',
    'An SLA policy sets first-response and resolution targets per priority, counted in business hours (Settings → Business hours). Tickets show the time left and turn amber, then red, as the target approaches and passes. SLA reports show how often each target was met.',
    ['sla', 'tickets', 'reports'],
  ),
  entry(
    'notifications-email',
    'How do I stop getting so many notification emails?',
    'Each member chooses their own notifications under Profile → Notifications: per event type you can get an email, a browser notification, both or nothing, and a daily summary instead of individual emails.',
    ['notifications', 'profile'],
  ),
  entry(
    'audit-log',
    'Is there an audit log?',
    'Business and Enterprise workspaces have an audit log under Settings → Security → Audit log. It records sign-ins, changes to settings, members, roles, API keys and exports, with who, when and from which IP address, and keeps entries for one year. It can be exported as CSV.',
    ['security', 'audit'],
  ),
  entry(
    'status-outages',
    'How do I know if Acme Desk is having an outage?',
    'Check status.acmedesk.example, which shows current incidents and past uptime per region. You can subscribe to updates by email or RSS there. Planned maintenance is announced at least 72 hours ahead.',
    ['status', 'support'],
  ),
  entry(
    'support-contact',
    'How do I contact Acme Desk support?',
    'Use the help button inside the app or email help@acmedesk.example. Starter plans get answers within one business day, Business within four business hours, and Enterprise has 24/7 support for urgent issues with a named account manager.',
    ['support'],
  ),
];
