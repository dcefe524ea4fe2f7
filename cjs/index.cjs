// The CommonJS entry of `require('shipping-sandbox')`. The package is ESM; every Node line it
// supports (and Node 20.19+) loads an ES module with require() synchronously (require(esm): the
// graph has no top-level await), so this hands out the very same module as `import` does: one
// copy of the API, no dual-package hazard. Jest's module system is not Node's and cannot load it;
// docs/guides/install.md shows the Jest recipe (the sandbox in globalSetup).
module.exports = require('../dist/index.js');
