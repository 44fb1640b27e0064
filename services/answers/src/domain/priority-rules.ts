import type { Category, Priority } from './ports.js';

// Each rule is a list of patterns over the lower-cased text. Patterns are phrases
// rather than single words so that "what security certifications do you have?"
// is not mistaken for a security incident.

/** Outage, data loss, security incident. */
const CRITICAL = [
  /\b(outage|outages)\b/,
  /\b(site|service|app|api|platform|system|server|servers|dashboard|website|everything|production|prod)\s+(is|are|went|seems?)\s+(completely\s+|totally\s+)?down\b/,
  /\b(all|every|none of (the|our)|no) (users?|customers?|employees?|agents?)\b.{0,40}\b(can'?t|cannot|unable|locked out|affected|down|lost)\b/,
  /\b(affects?|affecting|impacts?|impacting|hits?|hitting) (all|every one of|each of) (our |the |my )?(users|customers|tenants|clients|accounts|stores|sites)\b/,
  /\b(production|prod)\b.{0,30}\b(outage|offline|unavailable|(is|are|went|goes|has gone|seems) (completely |totally )?down)\b/,
  /\b(nobody|no one|no-one|none of us)\b.{0,30}\b(can|is able to)\b/,
  /\bdata (loss|lost|was lost|is gone|disappeared|corruption|corrupted|breach|leak)\b/,
  /\b(lost|deleted|wiped|erased)\b.{0,25}\b(all|every|entire|whole)\b.{0,25}\b(data|records|files|tickets|projects|history|account)\b/,
  /\b(all|entire|whole) (our |my )?(data|records|history|database)\b.{0,30}\b(gone|lost|deleted|disappeared|wiped)\b/,
  /\bsecurity (vulnerability|issue|hole|incident|breach|bug|flaw|problem)\b/,
  /\b(vulnerability|vulnerable to|exploit|exploitable|cve-\d{4}|xss|csrf|sql injection|remote code execution|rce|privilege escalation|account takeover)\b/,
  /\b(unauthori[sz]ed access|been hacked|was hacked|compromised account|account (was|got|has been) compromised)\b/,
  /\b(exposed|leaked|leaking|leaks|visible to other)\b.{0,40}\b(passwords?|tokens?|api keys?|secrets?|credentials|personal data|customer data|emails?)\b/,
  /\bsev(erity)?[ -]?(0|1)\b|\bp0\b/,
];

/** Crashes, people blocked, production impact, money. */
const HIGH = [
  /\b(crash|crashes|crashed|crashing|segfault|segmentation fault|core dumped|panic|hard freeze|freezes|kernel panic)\b/,
  /\b(blocked|blocking|blocker|showstopper|show-stopper)\b/,
  /\b(in|on|for) (production|prod)\b|\bproduction (environment|system|site|app|server|issue|outage)\b/,
  /\b(urgent|urgently|asap|as soon as possible|critical issue|emergency)\b/,
  /\b(can'?t|cannot|unable to|not able to) (log ?in|sign ?in|login|access (my|our|the) account)\b/,
  /\b(charged|billed) (twice|two times|double|multiple times)\b|\bdouble[- ]charged\b|\bpayments? (fail|failed|failing|declined)\b/,
  /\b(500|502|503|504) (error|errors|response)\b|\binternal server error\b/,
  /\b(regression|no longer works|stopped working|broke after|broken after|broken since)\b/,
  /\b(hangs|hanging|unresponsive|not responding|deadlock|memory leak|out of memory|oom)\b/,
  /\b(data|records|file|files)\b.{0,20}\b(not saved|not saving|missing|disappear|disappeared|overwritten)\b/,
];

/** The reporter says it can wait: overrides the high rules (never an outage, data loss or security). */
const CAN_WAIT = [
  /\b(not (urgent|critical|blocking|a blocker)|no rush|low priority|whenever you (can|get a chance)|when you have time)\b/,
];

/** Cosmetic problems, typos, questions, nice-to-haves. */
const LOW = [
  /\b(cosmetic|typo|typos|spelling|misspell|misspelled|misspelt|grammar|wording|capitali[sz]ation)\b/,
  /\b(alignment|misaligned|aligned|padding|margin|font size|font|colou?r|icon|tooltip|dark mode|pixel|pixels|spacing|truncated label)\b/,
  /\b(minor|trivial|small (issue|thing|glitch|detail))\b/,
  /\b(nice to have|would be nice|would be great|would be cool|just (wondering|curious)|out of curiosity)\b/,
];

const matches = (patterns: RegExp[], text: string) => patterns.some((p) => p.test(text));

/**
 * Priority by rules, first match wins (docs: services/answers/README.md, "Priority rules"):
 * 1. outage, production down, all users affected, data loss, security → critical
 *    (high for questions and feature requests: people asking how something works, or
 *    for something new, are rarely mid-incident);
 * 2. the reporter says it can wait ("not urgent", "no rush") → low;
 * 3. crash, blocked, production, urgent, login/payment failures, 5xx, regression,
 *    hangs, unsaved data → high (medium for feature requests);
 * 4. questions, documentation, cosmetic problems, typos, nice-to-haves → low;
 * 5. everything else → medium.
 */
export function priorityFor(content: string, category: Category): Priority {
  const text = content.toLowerCase().slice(0, 20_000);
  const questionLike =
    category === 'how_to' || category === 'general_question' || category === 'documentation';
  if (matches(CRITICAL, text))
    return questionLike || category === 'feature_request' ? 'high' : 'critical';
  if (matches(CAN_WAIT, text)) return 'low';
  if (matches(HIGH, text)) return category === 'feature_request' ? 'medium' : 'high';
  if (questionLike || matches(LOW, text)) return 'low';
  return 'medium';
}
