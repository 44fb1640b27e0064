// Lays a Draft out the way tickets arrive: a GitHub issue filled in from a template, a
// free-form issue, an email, a chat message or a short help-desk ticket. Text is
// `title\n\nbody` when there is a subject, as ClassifyTicket and eval:triage receive it.
import type { Category } from '../../src/domain/ports.js';
import { neutral, plain, type Draft, type SectionKind } from './drafts.js';
import type { Rand, Slots } from './rng.js';

export type Style = 'template' | 'prose' | 'email' | 'chat' | 'ticket';

/** Heading wordings per section, as different trackers' templates name them. */
const HEADINGS: Partial<Record<SectionKind, string[]>> = {
  description: [
    'Describe the bug',
    'Description',
    'Bug description',
    'Issue description',
    'What happened?',
    'Summary',
    'Describe the issue',
    'Current behavior',
    'Details',
    'Problem description',
  ],
  steps: [
    'To Reproduce',
    'Steps to reproduce',
    'Steps to Reproduce',
    'Reproduction steps',
    'How to reproduce',
  ],
  expected: ['Expected behavior', 'Expected behaviour', 'Expected result'],
  actual: ['Actual behavior', 'Actual result', 'Observed behavior'],
  logs: [
    'Logs',
    'Error message',
    'Stack trace',
    'Relevant log output',
    'Log output',
    'Error logs',
    'Traceback',
  ],
  code: [
    'Code',
    'Code to reproduce',
    'Minimal example',
    'Sample code',
    'Example',
    'Snippet',
    'Standalone code',
  ],
  environment: [
    'Environment',
    'System information',
    'Versions',
    'Version',
    'Your environment',
    'Setup',
    'System info',
  ],
  problem: [
    'Is your feature request related to a problem?',
    'Problem',
    'Motivation',
    'Background',
    'The problem',
    'Use case',
  ],
  proposal: [
    "Describe the solution you'd like",
    'Proposed solution',
    'Proposal',
    'Solution',
    'Feature description',
    'Describe the feature',
    'What would you like?',
  ],
  alternatives: [
    "Describe alternatives you've considered",
    'Alternatives',
    'Alternatives considered',
    'Workarounds',
  ],
  context: [
    'Additional context',
    'Additional information',
    'Context',
    'Notes',
    'Anything else?',
    'More info',
  ],
  question: ['Question', 'Your question', 'What do you need help with?', 'Details'],
};

function heading(r: Rand, kind: SectionKind, markup: number): string | undefined {
  const names = HEADINGS[kind];
  if (!names || r.chance(0.1)) return undefined;
  const name = r.pick(names);
  return [`### ${name}`, `## ${name}`, `**${name}**`, `${name}:`, `#### ${name}`][markup];
}

const ISSUE_TYPE: Record<Category, string> = {
  bug: 'issue_type_bug',
  feature_request: 'issue_type_feature',
  how_to: 'issue_type_question',
  general_question: 'issue_type_question',
  documentation: 'issue_type_docs',
};

/** An "issue type" field of a form; people pick the wrong one now and then. */
function issueType(r: Rand, label: Category, s: Slots): string {
  const chosen = r.chance(0.2) ? r.pick(Object.keys(ISSUE_TYPE) as Category[]) : label;
  return neutral(r, ISSUE_TYPE[chosen], s);
}

function asTemplate(r: Rand, draft: Draft, s: Slots): string {
  const markup = r.int(0, 4);
  const out: string[] = [];
  if (r.chance(0.3)) out.push(neutral(r, 'comment', s));
  if (r.chance(0.15)) out.push(issueType(r, draft.label, s));
  for (const sec of draft.sections) {
    const h = sec.kind === 'closing' ? undefined : heading(r, sec.kind, markup);
    if (!h) out.push(plain(sec));
    else out.push(`${h}\n\n${sec.intro && r.chance(0.3) ? plain(sec) : sec.text}`);
  }
  if (r.chance(0.25)) out.push(neutral(r, 'checklist', s));
  return out.filter(Boolean).join('\n\n');
}

function asProse(r: Rand, draft: Draft, s: Slots): string {
  const out: string[] = [];
  if (r.chance(0.2)) out.push(neutral(r, 'greeting', s));
  out.push(...draft.sections.map(plain));
  if (r.chance(0.2)) out.splice(out.length - 1, 0, neutral(r, 'filler', s));
  return out.filter(Boolean).join(r.chance(0.7) ? '\n\n' : '\n');
}

function asEmail(r: Rand, draft: Draft, s: Slots): string {
  const keep = draft.sections.filter(
    (sec) => sec.text && (sec.kind !== 'environment' || r.chance(0.3)),
  );
  const oneParagraph = r.chance(0.4) && keep.every((sec) => !plain(sec).includes('\n'));
  const body = keep.map(plain).join(oneParagraph ? ' ' : '\n\n');
  const filler = r.chance(0.3) ? `\n\n${neutral(r, 'filler', s)}` : '';
  return `${neutral(r, 'greeting', s)}\n\n${body}${filler}\n\n${neutral(r, 'signoff', s)}`;
}

/** A chat message: the intent in a sentence or two, often lower case and unpunctuated. */
function asChat(r: Rand, draft: Draft): string {
  let text = draft.core;
  if (r.chance(0.3))
    text = `${r.pick(['hi', 'hey', 'hello', 'quick question:', 'hi team'])} ${text}`;
  if (r.chance(0.5)) text = text.toLowerCase();
  if (r.chance(0.3)) text = text.replace(/[.!]$/, '');
  return text;
}

function asTicket(r: Rand, draft: Draft): string {
  const short = draft.sections.filter(
    (sec) => !['environment', 'code', 'logs', 'steps', 'background'].includes(sec.kind),
  );
  return short.slice(0, r.int(1, 2)).map(plain).join(' ');
}

/** Share of each layout per kind of ticket: developer issues are mostly templated. */
const STYLE_WEIGHTS: Record<Category, Record<Style, number>> = {
  bug: { template: 4, prose: 3, email: 1, chat: 1, ticket: 1 },
  feature_request: { template: 3, prose: 3, email: 1, chat: 1, ticket: 2 },
  how_to: { template: 3, prose: 4, email: 1.5, chat: 1.5, ticket: 1 },
  general_question: { template: 1, prose: 3, email: 2, chat: 2, ticket: 2 },
  documentation: { template: 1.5, prose: 4, email: 1, chat: 1, ticket: 2 },
};

/** The ticket text of a draft in a style chosen for its kind; title first unless it is a chat message. */
export function render(r: Rand, draft: Draft, s: Slots): { text: string; style: Style } {
  const style = r.weighted(STYLE_WEIGHTS[draft.label]);
  let body: string;
  switch (style) {
    case 'template':
      body = asTemplate(r, draft, s);
      break;
    case 'prose':
      body = asProse(r, draft, s);
      break;
    case 'email':
      body = asEmail(r, draft, s);
      break;
    case 'chat':
      return { text: asChat(r, draft), style };
    default:
      body = asTicket(r, draft);
  }
  // Some titles say nothing about the kind ("Problem with the exporter"): the body must carry it.
  const title = r.chance(0.12) ? neutral(r, 'neutral_title', s) : draft.title;
  const withTitle = style === 'email' ? r.chance(0.6) : r.chance(0.95);
  return { text: withTitle ? `${title}\n\n${body}` : body, style };
}
