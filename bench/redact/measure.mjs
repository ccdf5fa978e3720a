// Scores placed cases: recall (secrets that no longer survive) and look-alikes altered, per family, kind,
// placement and context. `outcome(case) → { caught | altered }` is given by the caller (in process, through the
// CLI, or gitleaks' findings).

function bump(table, key, hit) {
  const row = table.get(key) ?? { n: 0, hit: 0 };
  row.n++;
  if (hit) row.hit++;
  table.set(key, row);
}

/** { secrets: {n, caught}, lookalikes: {n, altered}, by: { family, placement, context, kind, source } }. */
export function score(cases, outcome) {
  const by = {
    family: new Map(),
    placement: new Map(),
    context: new Map(),
    kind: new Map(),
    source: new Map(),
  };
  const misses = [];
  const falsePositives = [];
  let secrets = 0;
  let caught = 0;
  let lookalikes = 0;
  let altered = 0;
  for (const c of cases) {
    const result = outcome(c);
    if (c.type === 'secret') {
      secrets++;
      if (result) caught++;
      else misses.push(c);
      for (const key of Object.keys(by)) bump(by[key], c[key], result);
    } else {
      lookalikes++;
      if (result) {
        altered++;
        falsePositives.push(c);
      }
    }
  }
  return { secrets, caught, lookalikes, altered, by, misses, falsePositives };
}

export const pct = (hit, n) => (n === 0 ? '–' : `${((100 * hit) / n).toFixed(1)}%`);
