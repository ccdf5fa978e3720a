// Translates a Go (RE2) regular expression, as gitleaks writes them, into JavaScript source that means the same
// on Node 20. Why a translation and not the `i` flag: Go scopes case-insensitivity (`(?i)` mid-pattern applies to
// the rest of its group, `(?i:…)`, `(?-i:…)`), and V8 11 (Node 20) has no inline modifiers. So case-insensitive
// parts are spelled out (`a` → `[aA]`, `[a-z0-9]` → `[a-zA-Z0-9]`) and the result needs no flag at all.
// Also: `(?s)`/`(?s:.)` → `[\s\S]`, Go's `.` (anything but \n) → `[^\n]`, `\z` → `(?![\s\S])`, `\A` → `^`,
// `(?P<name>` → `(?<name>`, and a `]` first in a class is escaped (Go reads `[^]]` as "not ]").

const isLetter = (c) => /^[A-Za-z]$/.test(c);
const other = (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/** Parses flags like `i`, `-i`, `is`, `s-i` into changes of the current state. */
function applyFlags(spec, state) {
  const next = { ...state };
  let on = true;
  for (const ch of spec) {
    if (ch === '-') on = false;
    else if (ch === 'i') next.ci = on;
    else if (ch === 's') next.dotAll = on;
    else if (ch === 'm' || ch === 'U') throw new Error(`unsupported flag ${ch}`);
  }
  return next;
}

/** Translates one character class starting at `src[i] === '['`; returns [js, next index]. */
function translateClass(src, i, state) {
  let j = i + 1;
  let out = '[';
  if (src[j] === '^') {
    out += '^';
    j++;
  }
  const items = [];
  let first = true;
  while (j < src.length && (src[j] !== ']' || first)) {
    first = false;
    if (src.startsWith('[:', j)) {
      const end = src.indexOf(':]', j);
      const name = src.slice(j + 2, end);
      const posix = { alnum: 'A-Za-z0-9', alpha: 'A-Za-z', digit: '0-9', xdigit: '0-9A-Fa-f', space: '\\s' }[
        name
      ];
      if (!posix) throw new Error(`unsupported POSIX class ${name}`);
      items.push(posix);
      j = end + 2;
      continue;
    }
    let atom;
    if (src[j] === '\\') {
      if (src[j + 1] === 'x') {
        atom = src.slice(j, j + 4);
        j += 4;
      } else {
        atom = src.slice(j, j + 2);
        j += 2;
      }
    } else {
      atom = src[j] === ']' || src[j] === '[' ? `\\${src[j]}` : src[j];
      j++;
    }
    // a range a-z
    if (src[j] === '-' && src[j + 1] !== ']' && j + 1 < src.length) {
      let to;
      if (src[j + 1] === '\\') {
        to = src.slice(j + 1, j + 3);
        j += 3;
      } else {
        to = src[j + 1];
        j += 2;
      }
      items.push(`${atom}-${to}`);
      if (state.ci && isLetter(atom) && isLetter(to) && /[a-z]/.test(atom) === /[a-z]/.test(to))
        items.push(`${other(atom)}-${other(to)}`);
      continue;
    }
    items.push(atom);
    if (state.ci && isLetter(atom)) items.push(other(atom));
  }
  if (src[j] !== ']') throw new Error(`unterminated class at ${i}`);
  return [`${out}${items.join('')}]`, j + 1];
}

/** The JavaScript source of a Go regex (to be compiled without the `i` or `s` flags). */
export function goToJs(src) {
  const stack = [];
  let state = { ci: false, dotAll: false };
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') {
      const n = src[i + 1];
      if (n === 'z') out += '(?![\\s\\S])';
      else if (n === 'A') out += '^';
      else if (n === 'x') {
        out += src.slice(i, i + 4);
        i += 4;
        continue;
      } else if (isLetter(n)) out += `\\${n}`;
      else out += `\\${n}`;
      i += 2;
      continue;
    }
    if (c === '[') {
      const [js, next] = translateClass(src, i, state);
      out += js;
      i = next;
      continue;
    }
    if (c === '(') {
      if (src[i + 1] === '?') {
        const flagOnly = /^\(\?([-is]+)\)/.exec(src.slice(i));
        if (flagOnly) {
          state = applyFlags(flagOnly[1], state);
          i += flagOnly[0].length;
          continue;
        }
        const flagGroup = /^\(\?([-is]*):/.exec(src.slice(i));
        if (flagGroup) {
          stack.push(state);
          state = applyFlags(flagGroup[1], state);
          out += '(?:';
          i += flagGroup[0].length;
          continue;
        }
        const named = /^\(\?P?<([A-Za-z_]\w*)>/.exec(src.slice(i));
        if (named) {
          stack.push(state);
          out += `(?<${named[1]}>`;
          i += named[0].length;
          continue;
        }
        throw new Error(`unsupported group at ${i}: ${src.slice(i, i + 8)}`);
      }
      stack.push(state);
      out += '(';
      i++;
      continue;
    }
    if (c === ')') {
      state = stack.pop() ?? state;
      out += ')';
      i++;
      continue;
    }
    if (c === '.') {
      out += state.dotAll ? '[\\s\\S]' : '[^\\n]';
      i++;
      continue;
    }
    if (state.ci && isLetter(c)) {
      out += `[${c}${other(c)}]`;
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}
