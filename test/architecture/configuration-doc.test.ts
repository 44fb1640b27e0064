// One config dialect (docs/configuration.md): every service's variables are upper snake case,
// each described in its zod schema, and the document's tables are those schemas, not a copy
// that can drift.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIG_DOC, renderedDoc, SCHEMAS, variablesOf } from '../../scripts/config-docs.js';

describe('configuration: one dialect, documented from the schemas', () => {
  it('when the schemas are listed, then every service has one', () => {
    assert.deepEqual(Object.keys(SCHEMAS).sort(), [
      'answers',
      'digest',
      'gateway',
      'knowledge',
      'tickets',
    ]);
  });

  for (const [service, schema] of Object.entries(SCHEMAS)) {
    it(`when ${service}'s variables are read, then each is UPPER_SNAKE with a description`, () => {
      const variables = variablesOf(schema);
      assert.ok(variables.length > 5);
      for (const v of variables) {
        assert.match(v.name, /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, v.name);
        assert.ok((v.description ?? '').trim().length > 10, `${service} ${v.name} is described`);
      }
    });
  }

  it('when the tables are made again from the schemas, then docs/configuration.md is unchanged', () => {
    const current = readFileSync(CONFIG_DOC, 'utf8');
    assert.equal(
      renderedDoc(current),
      current,
      'docs/configuration.md is stale: run `npx tsx scripts/config-docs.ts`',
    );
  });
});
