// The CommonJS entry of `require('shipping-sandbox/testcontainers')`: the same ES module as its
// `import`, loaded with Node's require(esm) (see index.cjs). Needs the `testcontainers` package.
module.exports = require('../dist/client/testcontainers.js');
