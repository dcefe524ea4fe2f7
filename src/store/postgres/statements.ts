import type pg from 'pg';

/** How many distinct statement texts a process prepares; texts beyond (listings' many LIMITs) run unprepared. */
const PREPARED_MAX = 400;
/** A result of `*` that a migration may widen: a prepared plan of it would fail ("cached plan must not change result type"). */
const STAR = /(?:SELECT|RETURNING)\s+(?:\w+\.)?\*|\w\.\*/i;
/** Each statement text's name ('' for one that runs unprepared): one name per text in the process, as pg requires. */
const statementNames = new Map<string, string>();

/**
 * A statement with parameters as a named (prepared) one: each connection parses and plans
 * it once, not at every execution of the many short statements of a request. Statements
 * whose result is `*` stay unnamed (see STAR), so an older replica keeps working when a
 * newer one adds a column during a rolling upgrade.
 */
export function statement(text: string, values?: unknown[]): string | pg.QueryConfig {
  if (values === undefined) return text;
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= PREPARED_MAX) return { text, values };
    name = STAR.test(text) ? '' : `sandbox_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name === '' ? { text, values } : { name, text, values };
}
