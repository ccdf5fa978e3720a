// One pass over a text that tells which of many keywords it contains, ASCII case-insensitively (an Aho-Corasick
// automaton). Why: gitleaks gates each of its ~200 rules on keywords; testing them one `includes` at a time
// would read every text ~300 times, and most texts hold none, so most texts then skip every rule.

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
  /** the root's transitions for ASCII, as an array */
  private readonly fromRoot = new Int32Array(128);

  constructor(keywords: readonly string[]) {
    this.keywords = keywords;
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
    for (const [c, to] of (this.nodes[0] as Node).next) if (c < 128) this.fromRoot[c] = to;
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

  /** Which keywords (by index) occur in the text. */
  found(text: string): Set<number> {
    const hits = new Set<number>();
    const nodes = this.nodes;
    const fromRoot = this.fromRoot;
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      const c = lower(text.charCodeAt(i));
      if (state === 0) {
        // most characters start no keyword: one array read, no map
        state = c < 128 ? (fromRoot[c] as number) : 0;
        if (state !== 0) {
          const out = (nodes[state] as Node).out;
          for (let k = 0; k < out.length; k++) hits.add(out[k] as number);
        }
        continue;
      }
      let node = nodes[state] as Node;
      let to = node.next.get(c);
      while (to === undefined && state !== 0) {
        state = node.fail;
        node = nodes[state] as Node;
        to = node.next.get(c);
      }
      if (to === undefined) {
        state = 0;
        continue;
      }
      state = to;
      const out = (nodes[state] as Node).out;
      for (let k = 0; k < out.length; k++) hits.add(out[k] as number);
    }
    return hits;
  }
}
