// Labelled tickets made up for the organization-triage tests: each label has its own topic
// words, mixed into sentences with shared filler (seeded, so every run sees the same tickets).
import { mulberry32 } from '@support-agent/shared';

const FILLER = [
  'hello team',
  'since this morning',
  'on my account',
  'please have a look',
  'thanks a lot',
  'for our company',
  'again today',
  'from the web app',
];

/** `perLabel` tickets for each label, whose text speaks of that label's topic words. */
export function labelledTickets(
  topics: Record<string, string[]>,
  perLabel: number,
  seed = 1,
): { text: string; label: string }[] {
  const random = mulberry32(seed);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;
  const out: { text: string; label: string }[] = [];
  for (let i = 0; i < perLabel; i++)
    for (const [label, words] of Object.entries(topics))
      out.push({
        label,
        text: `${pick(words)} ${pick(FILLER)}\n\nThe ${pick(words)} ${pick(FILLER)}, and the ${pick(words)} ${pick(FILLER)} (${i}).`,
      });
  return out;
}

/** Topics of two kinds of support ticket, used with opposite labels by two organizations. */
export const BILLING_WORDS = ['invoice', 'charge', 'refund', 'payment', 'billing', 'receipt'];
export const ACCESS_WORDS = ['password', 'login', 'sign in', 'two-factor', 'locked out', 'sso'];
