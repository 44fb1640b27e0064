// Test KB entries (written for these tests) and helpers shared by the test files.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@support-agent/shared';
import type { EntryInput } from '../../src/domain/validation.js';

export const silentLogger = createLogger('knowledge-test', 'silent');

export const ENTRIES: Required<EntryInput>[] = [
  {
    id: 'reset-password',
    question: 'How do I reset my password?',
    answer:
      'Open Settings, then Security, and choose Reset password. We email you a link that stays valid for one hour.',
    tags: ['account', 'security'],
  },
  {
    id: 'export-csv',
    question: 'Can I export my tickets to a CSV file?',
    answer:
      'Yes. In the Tickets view choose Export and pick CSV. Exports of more than 10,000 rows are emailed to you.',
    tags: ['tickets'],
  },
  {
    id: 'delete-account',
    question: 'How do I delete my account?',
    answer:
      'Account owners close the workspace under Settings, Billing, Close account. All data is erased after 30 days.',
    tags: ['account'],
  },
  {
    id: 'invite-teammates',
    question: 'How do I invite teammates to my workspace?',
    answer:
      'Go to Settings, Members and send an invitation by email. Invitees join with the role you choose for them.',
    tags: [],
  },
  {
    id: 'api-rate-limits',
    question: 'What are the API rate limits?',
    answer:
      'Each API key may make 600 requests per minute. A 429 response carries a Retry-After header in seconds.',
    tags: ['api'],
  },
  {
    id: 'two-factor',
    question: 'How do I turn on two-factor authentication?',
    answer:
      'Under Profile, Security, enable two-factor authentication and scan the QR code with an authenticator app.',
    tags: ['security'],
  },
  {
    id: 'billing-invoices',
    question: 'Where can I download my invoices?',
    answer: 'Invoices are listed under Settings, Billing, Invoices; each one downloads as a PDF.',
    tags: ['billing'],
  },
];

export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** A random lower-case suffix for collection prefixes and org ids. */
export function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}
