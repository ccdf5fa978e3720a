// Random strings that match a Go regex (the subset gitleaks' rules use), as gitleaks' own rule tests make their
// true-positive samples (`secrets.NewSecret(regex)`): literals, classes, groups, alternation, quantifiers.
// Anchors and word boundaries produce nothing. Case-insensitive parts keep the case the pattern spells.

/** A seeded PRNG (xorshift32): the same seed gives the same corpus. */
export function prng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

const CLASSES = {
  d: '0123456789',
  w: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_',
  s: ' ',
};

function parse(src) {
  let i = 0;
  function alternation() {
    const branches = [sequence()];
    while (src[i] === '|') {
      i++;
      branches.push(sequence());
    }
    return { type: 'alt', branches };
  }
  function sequence() {
    const items = [];
    while (i < src.length && src[i] !== '|' && src[i] !== ')') {
      const atom = parseAtom();
      if (atom === null) continue;
      items.push(quantified(atom));
    }
    return { type: 'seq', items };
  }
  function quantified(atom) {
    let min = 1;
    let max = 1;
    const c = src[i];
    if (c === '*' || c === '+' || c === '?') {
      min = c === '+' ? 1 : 0;
      max = c === '?' ? 1 : min + 4;
      i++;
    } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(src.slice(i))) {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? min + 8 : Number(m[3]);
      i += m[0].length;
    } else return atom;
    if (src[i] === '?') i++;
    return { type: 'rep', atom, min, max };
  }
  function parseClass() {
    i++; // [
    let negate = false;
    if (src[i] === '^') {
      negate = true;
      i++;
    }
    let chars = '';
    let first = true;
    while (src[i] !== ']' || first) {
      first = false;
      let c;
      if (src.startsWith('[:', i)) {
        const end = src.indexOf(':]', i);
        const name = src.slice(i + 2, end);
        chars += { alnum: 'a-zA-Z0-9', alpha: 'a-zA-Z', digit: '0-9' }[name] ?? '';
        i = end + 2;
        continue;
      }
      if (src[i] === '\\') {
        const n = src[i + 1];
        if (n === 'x') {
          c = String.fromCharCode(Number.parseInt(src.slice(i + 2, i + 4), 16));
          i += 4;
        } else if (CLASSES[n]) {
          chars += CLASSES[n];
          i += 2;
          continue;
        } else {
          c = n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n;
          i += 2;
        }
      } else c = src[i++];
      if (src[i] === '-' && src[i + 1] !== ']') {
        i++;
        let to = src[i++];
        if (to === '\\') to = src[i++];
        for (let k = c.charCodeAt(0); k <= to.charCodeAt(0); k++) chars += String.fromCharCode(k);
      } else chars += c;
    }
    i++; // ]
    if (negate) {
      const printable = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
      chars = [...printable].filter((ch) => !chars.includes(ch)).join('');
    }
    return { type: 'set', chars: chars.replace(/[ \t\n\r]/g, '') || chars };
  }
  function parseAtom() {
    const c = src[i];
    if (c === '(') {
      i++;
      if (src[i] === '?') {
        const flags = /^\?[-imsU]*\)/.exec(src.slice(i));
        if (flags) {
          i += flags[0].length;
          return null;
        }
        const m = /^\?(?:[-imsU]*:|P?<\w+>)/.exec(src.slice(i));
        i += m[0].length;
      }
      const inner = alternation();
      i++; // )
      return inner;
    }
    if (c === '[') return parseClass();
    if (c === '^' || c === '$') {
      i++;
      return null;
    }
    if (c === '.') {
      i++;
      return { type: 'set', chars: CLASSES.w };
    }
    if (c === '\\') {
      const n = src[i + 1];
      i += 2;
      if (n === 'b' || n === 'B' || n === 'z' || n === 'A') return null;
      if (CLASSES[n]) return { type: 'set', chars: n === 's' ? ' ' : CLASSES[n] };
      if (n === 'x') {
        const ch = String.fromCharCode(Number.parseInt(src.slice(i, i + 2), 16));
        i += 2;
        return { type: 'lit', text: ch };
      }
      return { type: 'lit', text: n };
    }
    i++;
    return { type: 'lit', text: c };
  }
  const tree = alternation();
  return tree;
}

function generate(node, random) {
  switch (node.type) {
    case 'alt':
      return generate(node.branches[Math.floor(random() * node.branches.length)], random);
    case 'seq':
      return node.items.map((item) => generate(item, random)).join('');
    case 'rep': {
      const n = node.min + Math.floor(random() * (Math.min(node.max, node.min + 16) - node.min + 1));
      let out = '';
      for (let k = 0; k < n; k++) out += generate(node.atom, random);
      return out;
    }
    case 'set':
      return node.chars[Math.floor(random() * node.chars.length)] ?? '';
    default:
      return node.text;
  }
}

/** A random string matching the Go regex source. */
export function sample(source, random) {
  return generate(parse(source), random);
}

/** The source of capture group n (1-based) of a Go regex, or undefined if it has none. */
export function groupSource(source, n) {
  let count = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      // skip the class
      i++;
      if (source[i] === '^') i++;
      if (source[i] === ']') i++;
      while (source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      continue;
    }
    if (c === '(' && source[i + 1] !== '?') {
      count++;
      if (count === n) {
        let depth = 1;
        let j = i + 1;
        for (; j < source.length && depth > 0; j++) {
          if (source[j] === '\\') j++;
          else if (source[j] === '[') {
            j++;
            if (source[j] === '^') j++;
            if (source[j] === ']') j++;
            while (source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
          } else if (source[j] === '(') depth++;
          else if (source[j] === ')') depth--;
        }
        return source.slice(i + 1, j - 1);
      }
    }
  }
  return undefined;
}
