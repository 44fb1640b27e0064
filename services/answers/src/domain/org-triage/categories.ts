// The rules of an organization's own categories (the name's form is shared with tickets and
// the gateway: packages/shared ticket-fields).
import { CATEGORY_NAME_RULE, invalidRequest, isCategoryName } from '@support-agent/shared';

export { isCategoryName } from '@support-agent/shared';

export const MIN_CATEGORIES = 2;
export const MAX_CATEGORIES = 50;

/** Checks a category list: 2–50 distinct names of the shared form (case-insensitively distinct). */
export function parseCategories(value: readonly string[]): string[] {
  const names = value.map((c) => c.trim());
  if (names.length < MIN_CATEGORIES || names.length > MAX_CATEGORIES)
    throw invalidRequest(
      `give ${MIN_CATEGORIES} to ${MAX_CATEGORIES} categories (got ${names.length})`,
      'categories',
    );
  const seen = new Map<string, string>();
  for (const name of names) {
    if (!isCategoryName(name))
      throw invalidRequest(
        `category "${name}" is not a valid name: ${CATEGORY_NAME_RULE}`,
        'categories',
      );
    const folded = name.toLowerCase();
    const other = seen.get(folded);
    if (other !== undefined)
      throw invalidRequest(`categories "${other}" and "${name}" differ only in case`, 'categories');
    seen.set(folded, name);
  }
  return names;
}

/** The error of a label that is not one of the categories, naming the line and the allowed ones. */
export function unknownLabelMessage(
  line: number,
  label: string,
  categories: readonly string[],
): string {
  const near = categories.find((c) => c.toLowerCase() === label.trim().toLowerCase());
  return (
    `line ${line}: label "${label}" is not one of the organization's categories (${categories.join(', ')})` +
    (near !== undefined ? `; did you mean "${near}"?` : '')
  );
}
