/** replay-history's version, as `--version` and reports say it (package.json's, checked by a test). */
export const version = '0.1.0';
