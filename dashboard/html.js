// Preact with htm: tagged templates instead of JSX, so the browser runs these files as they are.
// Text in templates is always escaped; nothing here renders a string as HTML.
import { h, render } from '/dashboard/vendor/preact.mjs';
import htm from '/dashboard/vendor/htm.mjs';

export { render };
export const html = htm.bind(h);
