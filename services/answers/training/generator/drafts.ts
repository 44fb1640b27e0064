// The content of one ticket of each kind, as a title and labelled sections; render.ts
// lays it out as a GitHub issue, an email, a chat message or a short ticket.
import type { Category } from '../../src/domain/ports.js';
import { codeBlock, envBlock, pastedError } from './artifacts.js';
import { Templates, type Domain } from './fragments.js';
import { capitalize, fill, fillOne, type Rand, type Slots } from './rng.js';

/** What a section is, so a template layout can give it a heading. */
export type SectionKind =
  | 'description'
  | 'steps'
  | 'expected'
  | 'actual'
  | 'logs'
  | 'code'
  | 'environment'
  | 'problem'
  | 'proposal'
  | 'alternatives'
  | 'context'
  | 'background'
  | 'question'
  | 'closing';

export interface Section {
  kind: SectionKind;
  /** A lead-in ("Steps to reproduce:", "I get this error:"); a layout with headings may drop it. */
  intro?: string;
  text: string;
}

/** A section as plain text, its lead-in included. */
export const plain = (sec: Section) => (sec.intro ? `${sec.intro}\n${sec.text}` : sec.text);

export interface Draft {
  label: Category;
  title: string;
  sections: Section[];
  /** The one sentence that carries the intent: what a chat message keeps. */
  core: string;
}

const T = {
  bug: new Templates('bug.txt'),
  feature: new Templates('feature.txt'),
  howto: new Templates('howto.txt'),
  general: new Templates('general.txt'),
  docs: new Templates('docs.txt'),
  support: new Templates('support.txt'),
  neutral: new Templates('neutral.txt'),
};

/** Cleans what templates leave behind: doubled spaces, a space before punctuation, a lower-case start. */
export function tidy(s: string): string {
  return s
    .split('\n')
    .map((line) =>
      capitalize(
        line
          .replace(/ {2,}/g, ' ')
          .replace(/ ([.,:?!])/g, '$1')
          .replace(/\.\./g, '.')
          .trimEnd(),
      ),
    )
    .join('\n')
    .trim();
}

const say = (r: Rand, t: Templates, section: string, s: Slots) =>
  tidy(fillOne(r, t.get(section), s));

function sentences(r: Rand, t: Templates, section: string, s: Slots, lo: number, hi: number) {
  return Array.from({ length: r.int(lo, hi) }, () => say(r, t, section, s))
    .filter(Boolean)
    .join(' ');
}

function errorSection(r: Rand, domain: Domain, s: Slots, intro: string): Section {
  const message = fill(r, '{error}', s);
  return { kind: 'logs', intro, text: pastedError(r, domain.lang, message) };
}

function bug(r: Rand, domain: Domain, s: Slots): Draft {
  // Developers' own reports name the code at fault; users' describe what they saw.
  const dev = domain.lang === 'none' ? 0.03 : 0.2;
  const core = say(
    r,
    T.bug,
    r.weighted({ dev_opening: dev, opening: 0.5, plain_opening: 0.5 - dev }),
    s,
  );
  const sections: Section[] = [
    { kind: 'description', text: [core, sentences(r, T.bug, 'detail', s, 0, 3)].join(' ') },
  ];
  if (r.chance(0.45)) {
    const steps = Array.from(
      { length: r.int(2, 5) },
      (_, i) => `${i + 1}. ${say(r, T.bug, 'step', s)}`,
    );
    sections.push({
      kind: 'steps',
      intro: say(r, T.bug, 'steps_intro', s),
      text: steps.join('\n'),
    });
  }
  if (r.chance(0.4)) {
    sections.push({ kind: 'expected', text: say(r, T.bug, 'expected', s) });
    sections.push({ kind: 'actual', text: say(r, T.bug, 'actual', s) });
  }
  if (r.chance(domain.lang === 'none' ? 0.25 : 0.55))
    sections.push(errorSection(r, domain, s, say(r, T.bug, 'error_intro', s)));
  if (r.chance(0.25)) sections.push({ kind: 'code', text: codeBlock(r, domain.lang) });
  if (r.chance(0.5)) sections.push({ kind: 'environment', text: envBlock(r, domain.lang) });
  if (r.chance(0.15)) sections.push({ kind: 'context', text: say(r, T.bug, 'workaround', s) });
  if (r.chance(0.5)) sections.push({ kind: 'closing', text: say(r, T.bug, 'closing', s) });
  // Some reports are phrased as questions ("is this a bug?"): a label is not a phrasing.
  const title = r.chance(0.08)
    ? tidy(
        fill(
          r,
          '[Why does|Why is] {component} [crashing|failing|broken] [when|after] {action_ing}?',
          s,
        ),
      )
    : say(r, T.bug, r.chance(0.3) ? 'plain_title' : 'title', s);
  return { label: 'bug', title, sections, core };
}

/**
 * A request filed through a bug template (trackers often offer only that one): the
 * missing capability is the "actual behaviour", the wish the "expected" one.
 */
function featureAsBugReport(r: Rand, domain: Domain, s: Slots): Draft {
  const core = say(r, T.feature, r.chance(0.5) ? 'problem' : 'plain_proposal', s);
  const sections: Section[] = [{ kind: 'description', text: core }];
  if (r.chance(0.7)) sections.push({ kind: 'expected', text: say(r, T.feature, 'as_expected', s) });
  if (r.chance(0.5)) sections.push({ kind: 'environment', text: envBlock(r, domain.lang) });
  if (r.chance(0.3)) sections.push({ kind: 'context', text: say(r, T.feature, 'rationale', s) });
  const title = r.chance(0.6)
    ? say(r, T.feature, 'title', s)
    : say(r, T.neutral, 'neutral_title', s);
  return { label: 'feature_request', title, sections, core };
}

function feature(r: Rand, domain: Domain, s: Slots): Draft {
  if (r.chance(0.15)) return featureAsBugReport(r, domain, s);
  const core = say(
    r,
    T.feature,
    r.weighted({ proposal: 0.5, plain_proposal: 0.25, dev_proposal: 0.25 }),
    s,
  );
  const sections: Section[] = [];
  if (r.chance(0.6)) sections.push({ kind: 'problem', text: say(r, T.feature, 'problem', s) });
  // What happens today, error included, is part of many requests ("currently it fails with…").
  if (r.chance(0.08)) sections.push(errorSection(r, domain, s, say(r, T.bug, 'error_intro', s)));
  sections.push({ kind: 'proposal', text: core });
  if (r.chance(0.5)) sections.push({ kind: 'context', text: say(r, T.feature, 'rationale', s) });
  if (r.chance(0.25))
    sections.push({ kind: 'alternatives', text: say(r, T.feature, 'alternatives', s) });
  if (r.chance(0.25))
    sections.push({
      kind: 'code',
      intro: say(r, T.feature, 'api_intro', s),
      text: codeBlock(r, domain.lang),
    });
  if (r.chance(0.2)) sections.push({ kind: 'environment', text: envBlock(r, domain.lang) });
  if (r.chance(0.45)) sections.push({ kind: 'closing', text: say(r, T.feature, 'closing', s) });
  return { label: 'feature_request', title: say(r, T.feature, 'title', s), sections, core };
}

/** A support request: something fails in the asker's own set-up or code and they want it working. */
function support(r: Rand, domain: Domain, s: Slots): Draft {
  const opening = say(r, T.support, r.chance(0.4) ? 'plain' : 'opening', s);
  const sections: Section[] = [{ kind: 'description', text: opening }];
  // Many arrive through the bug form: steps, expected and actual filled in about their own set-up.
  if (r.chance(0.35)) {
    const steps = Array.from(
      { length: r.int(2, 4) },
      (_, i) => `${i + 1}. ${say(r, T.support, 'step', s)}`,
    );
    sections.push({ kind: 'steps', text: steps.join('\n') });
    if (r.chance(0.6)) {
      sections.push({ kind: 'expected', text: say(r, T.bug, 'expected', s) });
      sections.push({ kind: 'actual', text: say(r, T.bug, 'actual', s) });
    }
  }
  if (r.chance(0.35)) sections.push({ kind: 'code', text: codeBlock(r, domain.lang) });
  if (r.chance(0.8))
    sections.push({ kind: 'logs', text: pastedError(r, domain.lang, fill(r, '{error}', s)) });
  if (r.chance(0.3))
    sections.push({ kind: 'context', text: sentences(r, T.howto, 'tried', s, 1, 2) });
  if (r.chance(0.55)) sections.push({ kind: 'environment', text: envBlock(r, domain.lang) });
  const ask = say(r, T.support, 'ask', s);
  if (ask) sections.push({ kind: 'question', text: ask });
  const title = r.chance(0.8) ? say(r, T.support, 'title', s) : say(r, T.howto, 'title', s);
  return { label: 'how_to', title, sections, core: `${opening} ${ask}`.trim() };
}

function howTo(r: Rand, domain: Domain, s: Slots): Draft {
  if (r.chance(0.6)) return support(r, domain, s);
  // "Is this expected?" and "how does it work inside?" are questions even when they
  // describe surprising behaviour: the asker wants an explanation, not a fix.
  const kind = r.weighted({ question: 0.65, expected_question: 0.25, internals: 0.1 });
  const question = say(r, T.howto, kind, s);
  const sections: Section[] = [];
  if (kind === 'expected_question' && r.chance(0.7))
    sections.push({ kind: 'description', text: say(r, T.bug, 'opening', s) });
  else if (r.chance(0.7)) sections.push({ kind: 'description', text: say(r, T.howto, 'goal', s) });
  if (r.chance(0.45))
    sections.push({ kind: 'context', text: sentences(r, T.howto, 'tried', s, 1, 2) });
  if (r.chance(0.35)) sections.push({ kind: 'code', text: codeBlock(r, domain.lang) });
  if (r.chance(0.45)) sections.push(errorSection(r, domain, s, say(r, T.howto, 'stuck', s)));
  sections.push({ kind: 'question', text: question });
  if (r.chance(0.45)) sections.push({ kind: 'environment', text: envBlock(r, domain.lang) });
  if (r.chance(0.55)) sections.push({ kind: 'closing', text: say(r, T.howto, 'closing', s) });
  const core = sections[0]!.kind === 'description' ? `${sections[0]!.text} ${question}` : question;
  return { label: 'how_to', title: say(r, T.howto, 'title', s), sections, core };
}

function general(r: Rand, domain: Domain, s: Slots): Draft {
  const core = r.chance(0.15) ? say(r, T.howto, 'internals', s) : say(r, T.general, 'body', s);
  const sections: Section[] = [{ kind: 'question', text: core }];
  if (r.chance(0.35)) sections.push({ kind: 'context', text: say(r, T.general, 'body', s) });
  if (r.chance(0.15)) sections.push({ kind: 'environment', text: envBlock(r, domain.lang) });
  if (r.chance(0.5)) sections.push({ kind: 'closing', text: say(r, T.general, 'closing', s) });
  return { label: 'general_question', title: say(r, T.general, 'title', s), sections, core };
}

function documentation(r: Rand, _domain: Domain, s: Slots): Draft {
  const core = say(r, T.docs, 'body', s);
  const sections: Section[] = [{ kind: 'description', text: core }];
  if (r.chance(0.3)) sections.push({ kind: 'context', text: say(r, T.docs, 'body', s) });
  if (r.chance(0.4)) sections.push({ kind: 'closing', text: say(r, T.docs, 'closing', s) });
  return { label: 'documentation', title: say(r, T.docs, 'title', s), sections, core };
}

/**
 * Adds class-neutral background (the asker's project, set-up, history) before the first
 * section now and then, at the same rate for every kind of ticket: real tickets carry
 * much context that says nothing about what they are.
 */
function withNarrative(make: (r: Rand, domain: Domain, s: Slots) => Draft) {
  return (r: Rand, domain: Domain, s: Slots): Draft => {
    const draft = make(r, domain, s);
    if (r.chance(0.35)) {
      const text = sentences(r, T.neutral, 'narrative', s, 1, 3);
      draft.sections.splice(r.int(0, Math.min(1, draft.sections.length)), 0, {
        kind: 'background',
        text,
      });
    }
    return draft;
  };
}

export const DRAFTS: Record<Category, (r: Rand, domain: Domain, s: Slots) => Draft> = {
  bug: withNarrative(bug),
  feature_request: withNarrative(feature),
  how_to: withNarrative(howTo),
  general_question: withNarrative(general),
  documentation: withNarrative(documentation),
};

/** Neutral text of the given section of neutral.txt (greetings, checklists, …). */
export const neutral = (r: Rand, section: string, s: Slots) => say(r, T.neutral, section, s);
