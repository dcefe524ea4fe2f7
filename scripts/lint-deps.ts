/**
 * `npm run lint:deps`: the layout rules of src/, told so that whoever broke one can act on
 * it. Each broken rule comes with its reason (the rule's comment in
 * .dependency-cruiser.cjs), the direct ones first. Circles of imports come last, one line
 * each: one import across a layer closes dozens of them, and they go once that import does.
 *
 *   tsx scripts/lint-deps.ts          # exit 1 when a rule is broken
 */
import { describeOffences, layoutOffences } from './layout-offences.js';

const { offences, reasons, cruised } = await layoutOffences();
if (offences.length > 0) {
  console.error(describeOffences(offences, reasons).join('\n'));
  const rules = new Set(offences.map((o) => o.rule)).size;
  console.error(`x ${offences.length} offence(s) of ${rules} rule(s) of the layout (docs/architecture.md says where each kind of change goes).`);
  process.exitCode = 1;
} else {
  console.log(`✔ the layout holds: ${cruised.modules} modules, ${cruised.dependencies} imports, every rule of .dependency-cruiser.cjs, every folder with its index.ts, no module augmented, no adapter named past the storage port.`);
}
