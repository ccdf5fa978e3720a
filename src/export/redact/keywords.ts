// One pass over a text that tells which of many keywords it contains, ASCII case-insensitively (an Aho-Corasick
// automaton). Why: gitleaks gates each of its ~200 rules on keywords; testing them one `includes` at a time
// would read every text ~300 times, and most texts hold none, so most texts then skip every rule. The search
// runs on a table of transitions over ASCII built on first use (one array read per character).

interface Node {
  next: Map<number, number>;
  fail: number;
  /** indices of the keywords that end here (own and by failure links) */
  out: number[];
}

const lower = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);

export class KeywordSet {
  private readonly nodes: Node[] = [{ next: new Map(), fail: 0, out: [] }];
  readonly keywords: readonly string[];
  private dense: { delta: Int32Array; hits: Int32Array } | undefined;

  constructor(keywords: readonly string[]) {
    this.keywords = keywords;
    keywords.forEach((keyword, index) => {
      let state = 0;
      for (let i = 0; i < keyword.length; i++) {
        const c = lower(keyword.charCodeAt(i));
        if (c >= 128)
          throw new Error(`keyword ${JSON.stringify(keyword)}: only ASCII keywords are supported`);
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
   * The automaton as a table over ASCII (failure links followed in advance): one array read per character.
   * Non-ASCII characters start no keyword and end any partial match (no keyword has one).
   */
  private table(): { delta: Int32Array; hits: Int32Array } {
    if (this.dense) return this.dense;
    const n = this.nodes.length;
    const delta = new Int32Array(n * 128);
    const hits = new Int32Array(n);
    // breadth first, so that a node's failure target is filled in before the node
    const order: number[] = [0];
    for (let q = 0; q < order.length; q++)
      for (const child of (this.nodes[order[q] as number] as Node).next.values()) order.push(child);
    for (const state of order) {
      const node = this.nodes[state] as Node;
      hits[state] = node.out.length;
      for (let c = 0; c < 128; c++) {
        const to = node.next.get(c);
        delta[state * 128 + c] =
          to !== undefined ? to : state === 0 ? 0 : (delta[node.fail * 128 + c] as number);
      }
    }
    this.dense = { delta, hits };
    return this.dense;
  }

  /** Which keywords (by index) occur in the text. */
  found(text: string): Set<number> {
    const found = new Set<number>();
    const { delta, hits } = this.table();
    const nodes = this.nodes;
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 128) {
        state = 0;
        continue;
      }
      state = delta[(state << 7) | (c >= 65 && c <= 90 ? c + 32 : c)] as number;
      if (hits[state] !== 0) for (const k of (nodes[state] as Node).out) found.add(k);
    }
    return found;
  }
}
