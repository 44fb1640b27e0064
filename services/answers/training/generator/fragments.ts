// Reads the generator's text fragments (fragments/*.txt): the product vocabularies and
// the sentence templates, kept as data so they can be read and extended without code.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Lang } from './artifacts.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fragments');

/**
 * Sections of a fragment file: `## name` starts one, each following non-empty line is one
 * template (`\n` in a line stands for a line break), `#` lines are comments.
 */
export function readSections(file: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.startsWith('## ')) {
        current = [];
        sections.set(line.slice(3).trim(), current);
      } else if (line.trim() === '' || line.startsWith('#')) {
        return;
      } else if (!current) {
        throw new Error(`${file}:${i + 1}: text before the first section`);
      } else {
        current.push(line.replace(/\\n/g, '\n'));
      }
    });
  return sections;
}

/** One file's templates by section name; a missing section is an error, not an empty list. */
export class Templates {
  private readonly sections: Map<string, string[]>;

  constructor(readonly file: string) {
    this.sections = readSections(file);
  }

  get(name: string): string[] {
    const t = this.sections.get(name);
    if (!t || t.length === 0) throw new Error(`${this.file}: no section "${name}"`);
    return t;
  }
}

export interface Domain {
  name: string;
  /** Language of the stack traces and code snippets its tickets carry. */
  lang: Lang;
  /** Word lists: product, component, action, symptom, error, setting, feature, goal, concept, doc_page, api, install. */
  words: Record<string, string[]>;
}

const DOMAIN_KEYS = [
  'product',
  'component',
  'action',
  'symptom',
  'error',
  'setting',
  'feature',
  'goal',
  'concept',
  'doc_page',
  'api',
  'install',
];

/** The product vocabularies of fragments/domains.txt. */
export function readDomains(): Domain[] {
  return [...readSections('domains.txt')].map(([header, lines]) => {
    const [name, lang] = header.split(/\s+/) as [string, Lang];
    const words: Record<string, string[]> = {};
    for (const line of lines) {
      const eq = line.indexOf(' = ');
      if (eq < 0) throw new Error(`domains.txt [${name}]: expected "key = a | b": ${line}`);
      words[line.slice(0, eq).trim()] = line
        .slice(eq + 3)
        .split(' | ')
        .map((s) => s.trim())
        .filter(Boolean);
    }
    for (const k of DOMAIN_KEYS)
      if (!words[k]?.length) throw new Error(`domains.txt [${name}]: no ${k}`);
    return { name, lang, words };
  });
}
