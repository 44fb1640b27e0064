// Knowledge-base entries the end-to-end suites import into their organizations.

/** Four help-centre entries; suites take the first two or three when that is all they need. */
export const SAMPLE_KB = [
  {
    id: 'pw-reset',
    question: 'How do I reset my password?',
    answer:
      'Open Settings > Security and choose "Reset password". We email you a link that is valid for one hour.',
  },
  {
    id: 'export-csv',
    question: 'How do I export tickets to CSV?',
    answer: 'In the Tickets view choose Export > CSV. Large exports are emailed to you when ready.',
  },
  {
    id: 'invoice',
    question: 'Where can I download invoices?',
    answer: 'Billing > Invoices lists every invoice as a PDF.',
  },
  {
    id: 'api-keys',
    question: 'Where do I create API keys?',
    answer:
      'Go to Settings > API keys, pick the scopes the key needs and copy it; it is shown only once.',
  },
];

/** Three shorter entries: the contract and MCP suites' organizations. */
export const SHORT_KB = [
  {
    id: 'pw-reset',
    question: 'How do I reset my password?',
    answer: 'Open Settings > Security and choose "Reset password". The link is valid for one hour.',
  },
  {
    id: 'export-csv',
    question: 'How do I export tickets to CSV?',
    answer: 'In the Tickets view choose Export > CSV. Large exports are emailed to you.',
  },
  {
    id: 'api-keys',
    question: 'Where do I create API keys?',
    answer: 'Go to Settings > API keys, pick the scopes and copy the key; it is shown only once.',
  },
];
