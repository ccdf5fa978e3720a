// One pass over a text that tells which of many keywords it contains, ASCII case-insensitively (an Aho-Corasick
// automaton). Why: gitleaks gates each of its ~200 rules on keywords; testing them one `includes` at a time
// would read every text ~300 times, and most texts hold none, so most texts then skip every rule. The search
// runs on a table of transitions over ASCII built on first use (one array read per character).
//
// Every KeywordSet of the process (secretlint's gates, ours, gitleaks', the name hints) shares one automaton
// over the union of their keywords, and the answer for the last text searched is kept: redaction asks each set
// about the same text in turn, so the text is read once, not once per set (issue 20: one pre-filter pass).

interface Node {
  next: Map<number, number>;
  fail: number;
  /** indices of the keywords that end here (own and by failure links) */
  out: number[];
}

const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

/** The automaton over the keywords of every set: its own indices, one per distinct lower-cased keyword. */
class Automaton {
  private readonly nodes: Node[] = [{ next: new Map(), fail: 0, out: [] }];
  private dense: Int32Array | undefined;
  readonly size: number;

  constructor(keywords: readonly string[]) {
    this.size = keywords.length;
    this.flags = new Uint8Array(keywords.length);
    this.shortest = keywords.reduce((n, keyword) => Math.min(n, keyword.length), Number.POSITIVE_INFINITY);
    keywords.forEach((keyword, index) => {
      let state = 0;
      for (let i = 0; i < keyword.length; i++) {
        const c = lower(keyword.charCodeAt(i));
        const node = this.nodes[state] as Node;
        let to = node.next.get(c);
        if (to === undefined) {
          to = this.nodes.length;
          this.nodes.push({ next: new Map(), fail: 0, out: [] });
          node.next.set(c, to);
        }
        state = to;
      }
      (this.nodes[state] as Node).out.push(index);
    });
    // failure links, breadth first
    const queue: number[] = [...(this.nodes[0] as Node).next.values()];
    for (let q = 0; q < queue.length; q++) {
      const node = this.nodes[queue[q] as number] as Node;
      for (const [c, child] of node.next) {
        let f = node.fail;
        while (f !== 0 && !(this.nodes[f] as Node).next.has(c)) f = (this.nodes[f] as Node).fail;
        const target = (this.nodes[f] as Node).next.get(c);
        const childNode = this.nodes[child] as Node;
        childNode.fail = target !== undefined && target !== child ? target : 0;
        childNode.out.push(...(this.nodes[childNode.fail] as Node).out);
        queue.push(child);
      }
    }
  }

  /**
   * The automaton as a table over ASCII (failure links followed in advance, upper case mapped to lower): one array
   * read per character. Each entry is the next state times 128, so that adding the next character gives the next
   * index, and is stored bitwise-negated (negative) when that state ends a keyword. Non-ASCII characters start no
   * keyword and end any partial match (no keyword has one).
   */
  private table(): Int32Array {
    if (this.dense) return this.dense;
    const n = this.nodes.length;
    const next = new Int32Array(n * 128);
    const delta = new Int32Array(n * 128);
    // breadth first, so that a node's failure target is filled in before the node
    const order: number[] = [0];
    for (let q = 0; q < order.length; q++)
      for (const child of (this.nodes[order[q] as number] as Node).next.values()) order.push(child);
    for (const state of order) {
      const node = this.nodes[state] as Node;
      for (let c = 0; c < 128; c++) {
        const to = node.next.get(lower(c));
        next[state * 128 + c] =
          to !== undefined ? to : state === 0 ? 0 : (next[node.fail * 128 + c] as number);
      }
    }
    for (let i = 0; i < next.length; i++) {
      const to = next[i] as number;
      delta[i] = (this.nodes[to] as Node).out.length > 0 ? ~(to * 128) : to * 128;
    }
    this.dense = delta;
    return delta;
  }

  /** The flags `search` returns, one array for every text (cleared where the last text set them). */
  private readonly flags: Uint8Array;
  private readonly set: number[] = [];
  /** No keyword is shorter: a shorter text holds none (most strings of a JSON value are short). */
  private readonly shortest: number;

  /**
   * Which keywords occur in the text: a flag per keyword index, valid until the next search (the names pass and
   * redaction ask about hundreds of thousands of strings: an array each was most of the cost for short ones).
   */
  search(text: string): Uint8Array {
    const seen = this.flags;
    for (const k of this.set) seen[k] = 0;
    this.set.length = 0;
    if (text.length < this.shortest) return seen;
    const delta = this.table();
    const nodes = this.nodes;
    let at = 0;
    let previous = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 128) {
        at = 0;
        continue;
      }
      let to = delta[at + c] as number;
      if (to < 0) {
        to = ~to;
        // the same state again (`keykeykey`, a long run of one keyword) has nothing new to mark
        if (to !== previous) {
          for (const k of (nodes[to >> 7] as Node).out)
            if (seen[k] === 0) {
              seen[k] = 1;
              this.set.push(k);
            }
          previous = to;
        }
      }
      at = to;
    }
    return seen;
  }
}

/** The keywords of every set made so far (lower-cased, each once) and the automaton over them. */
const pool: string[] = [];
const poolIndex = new Map<string, number>();
let shared: Automaton | undefined;
let searched: string | undefined;
let seen: Uint8Array = new Uint8Array(0);

function seenIn(text: string): Uint8Array {
  if (shared === undefined || shared.size !== pool.length) {
    shared = new Automaton(pool);
    searched = undefined;
  }
  if (text !== searched) {
    seen = shared.search(text);
    searched = text;
  }
  return seen;
}

export class KeywordSet {
  readonly keywords: readonly string[];
  /** each keyword's index in the shared pool */
  private readonly ids: number[];

  constructor(keywords: readonly string[]) {
    this.keywords = keywords;
    this.ids = keywords.map((keyword) => {
      let folded = '';
      for (let i = 0; i < keyword.length; i++) {
        const c = lower(keyword.charCodeAt(i));
        if (c >= 128)
          throw new Error(`keyword ${JSON.stringify(keyword)}: only ASCII keywords are supported`);
        folded += String.fromCharCode(c);
      }
      let id = poolIndex.get(folded);
      if (id === undefined) {
        id = pool.push(folded) - 1;
        poolIndex.set(folded, id);
      }
      return id;
    });
  }

  /** Which keywords (by index) occur in the text. */
  found(text: string): Set<number> {
    const flags = seenIn(text);
    const found = new Set<number>();
    const { ids } = this;
    for (let k = 0; k < ids.length; k++) if (flags[ids[k] as number] === 1) found.add(k);
    return found;
  }
}
