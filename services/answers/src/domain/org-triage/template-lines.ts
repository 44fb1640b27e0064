// An organization's template lines: the lines its issue and ticket templates put in many of its
// tickets — a form's headings and the values people pick in them ("### Issue type" then "Bug"),
// a checklist item, "**Expected behavior**" —, learned from the organization's own tickets (no
// labels needed). Its model reads each as one feature (`s:<line>`, and `s:<heading> | <line>`
// for a line under a markdown heading), where the word features only see them diluted among
// every other word of the ticket.

/** A line is a template line when at least this share of the tickets (and 3 of them) holds it. */
export const TEMPLATE_LINE_MIN_SHARE = 0.03;
/** Most template lines a model keeps (the most frequent first). */
const MAX_LINES = 2000;
/** Longest line read as a template line. */
const MAX_LINE_CHARS = 200;
/** Only the first lines of a ticket are read (templates come first; logs can be long). */
const MAX_READ_LINES = 400;

const normalize = (line: string) => line.trim().toLowerCase().replace(/\s+/g, ' ');

/** The candidate items of a text: its worded lines, and each under its heading. */
function items(text: string): Set<string> {
  const out = new Set<string>();
  let heading = '';
  let fenced = false;
  const lines = text.split('\n', MAX_READ_LINES);
  for (const raw of lines) {
    const line = normalize(raw);
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced || line.length > MAX_LINE_CHARS || !/\p{L}/u.test(line)) continue;
    out.add(line);
    if (/^#{1,6} /.test(line)) heading = line;
    else if (heading) out.add(`${heading} | ${line}`);
  }
  return out;
}

/** The items found in at least `minShare` of the texts (and 3 of them). */
export function learnTemplateLines(texts: string[], minShare = TEMPLATE_LINE_MIN_SHARE): string[] {
  const count = new Map<string, number>();
  for (const text of texts)
    for (const item of items(text)) count.set(item, (count.get(item) ?? 0) + 1);
  const min = Math.max(3, Math.ceil(minShare * texts.length));
  return [...count]
    .filter(([, n]) => n >= min)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, MAX_LINES)
    .map(([line]) => line);
}

/** The template-line features of a text (L2-normalised as one family). */
export function templateLineFeatures(text: string, known: ReadonlySet<string>): [string, number][] {
  if (known.size === 0) return [];
  const found = [...items(text)].filter((item) => known.has(item));
  const norm = 1 / Math.sqrt(found.length);
  return found.map((item) => [`s:${item}`, norm]);
}
