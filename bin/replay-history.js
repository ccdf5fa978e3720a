#!/usr/bin/env node
// The real program lives in dist/ (built by `npm install` through the prepare script).
await import('../dist/cli/main.js');
