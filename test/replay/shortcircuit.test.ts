import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Message, Part } from '../../src/model/session.js';
import { compareCalls, normalizeInput } from '../../src/replay/match.js';
import { ShortCircuit } from '../../src/replay/shortcircuit.js';
import { root } from '../helpers/cli.js';

let line = 0;
const call = (id: string, name: string, input: unknown): Message => ({
  role: 'assistant',
  parts: [{ type: 'tool_call', id, name, input }],
  source: { file: 'mem', line: ++line },
});
const result = (id: string, output: string, isError = false): Message => ({
  role: 'tool',
  parts: [{ type: 'tool_result', callId: id, output, isError } as Part],
  source: { file: 'mem', line: ++line },
});

const recording: Message[] = [
  call('1', 'Read', { file_path: '/repo/a.ts' }),
  result('1', 'first read of a'),
  call('2', 'Read', { file_path: '/repo/a.ts' }),
  result('2', 'second read of a'),
  call('3', 'Bash', { command: 'rm -rf build', timeout: 120000 }),
  result('3', 'removed'),
  call('4', 'Grep', { pattern: 'todo', path: '/repo/src', output_mode: 'content' }),
  result('4', 'src/x.ts:1: todo'),
  call('5', 'Write', { file_path: '/repo/b.ts', content: 'x' }),
  result('5', 'written'),
  call('6', 'Bash', { command: 'npm test' }),
];

const circuit = () =>
  new ShortCircuit(recording, {
    cwd: '/repo',
    defaults: (tool) => (tool === 'Bash' ? { timeout: 120000 } : undefined),
    readOnly: (tool) => ['Read', 'Grep', 'Glob'].includes(tool),
  });
const text = (answer: ReturnType<ShortCircuit['answer']>) =>
  answer.kind === 'hit' ? [answer.how, answer.result.output] : ['miss', answer.nearest];

describe('short-circuit', () => {
  it('gives the n-th identical call the n-th recorded result, key order ignored', () => {
    const sc = circuit();
    expect(text(sc.answer('Read', { file_path: '/repo/a.ts' }))).toEqual(['exact', 'first read of a']);
    expect(text(sc.answer('Read', { file_path: '/repo/a.ts' }))).toEqual(['exact', 'second read of a']);
    const grep = sc.answer('Grep', { output_mode: 'content', path: '/repo/src', pattern: 'todo' });
    expect(text(grep)).toEqual(['exact', 'src/x.ts:1: todo']);
  });

  it('lets a read-only call asked more often than recorded get its last result again, and nothing else', () => {
    const sc = circuit();
    sc.answer('Read', { file_path: '/repo/a.ts' });
    sc.answer('Read', { file_path: '/repo/a.ts' });
    expect(text(sc.answer('Read', { file_path: '/repo/a.ts' }))).toEqual(['repeat', 'second read of a']);
    expect(text(sc.answer('Write', { file_path: '/repo/b.ts', content: 'x' }))).toEqual(['exact', 'written']);
    expect(sc.answer('Write', { file_path: '/repo/b.ts', content: 'x' }).kind).toBe('miss');
  });

  it('matches after normalisation: relative vs absolute paths, whitespace, defaults left out', () => {
    const sc = circuit();
    expect(text(sc.answer('Read', { file_path: 'a.ts' }))).toEqual(['normalized', 'first read of a']);
    expect(text(sc.answer('Read', { file_path: './a.ts' }))).toEqual(['normalized', 'second read of a']);
    expect(text(sc.answer('Bash', { command: '  rm   -rf build ' }))).toEqual(['normalized', 'removed']);
    expect(text(sc.answer('Grep', { pattern: 'todo', path: 'src', output_mode: 'content' }))).toEqual([
      'normalized',
      'src/x.ts:1: todo',
    ]);
  });

  it('misses a call it does not hold, naming the nearest recorded calls and the fields that differ', () => {
    const answer = circuit().answer('Read', { file_path: '/repo/c.ts' });
    expect(answer.kind).toBe('miss');
    if (answer.kind !== 'miss') return;
    expect(answer.nearest[0]).toEqual({
      name: 'Read',
      input: { file_path: '/repo/a.ts' },
      differs: ['file_path'],
    });
    expect(answer.nearest.length).toBeLessThanOrEqual(3);
  });

  it('answers a free-form tool’s recorded text when asked for in the function form it is offered in', () => {
    const patch = '*** Begin Patch\n*** Add File: README.md\n+# hello\n*** End Patch';
    const recorded: Message[] = [
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'p', name: 'apply_patch', input: patch, freeform: true }],
        source: { file: 'mem', line: 1 },
      },
      result('p', 'Success. Updated the following files:\nA README.md'),
    ];
    const patches = () =>
      new ShortCircuit(recorded, { cwd: '/repo', defaults: () => undefined, readOnly: () => false });
    expect(patches().answer('apply_patch', { input: patch })).toMatchObject({ kind: 'hit', how: 'exact' });
    // The bare text is not how the tool is offered, so not how a model asks for it.
    expect(patches().answer('apply_patch', patch).kind).toBe('miss');
  });

  it('has no result for a call that never got one', () => {
    expect(circuit().answer('Bash', { command: 'npm test' }).kind).toBe('miss');
  });

  it('cannot run anything: what it loads at run time reaches no shell, file system or network module', () => {
    // The compiled module graph is what runs (type-only imports are gone), so that is what is checked.
    const forbidden =
      /(from|import\()\s*['"](node:)?(child_process|fs|fs\/promises|net|http|https|http2|dgram|dns|tls|worker_threads|vm|cluster|inspector|module)['"]/;
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      expect(forbidden.test(source), `${file} loads a module that can have effects`).toBe(false);
      expect(source, `${file} evaluates code or reaches the process`).not.toMatch(
        /\b(eval|new Function|process\.|require\()/,
      );
      for (const match of source.matchAll(/(?:from|import)\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        visit(join(file, '..', match[1] as string));
      }
    };
    visit(join(root, 'dist', 'replay', 'shortcircuit.js'));
    // It does load the matching and canonical-JSON code: the graph was really walked.
    expect([...seen].map((file) => file.slice(file.indexOf('dist')))).toEqual(
      expect.arrayContaining(['dist/replay/match.js', 'dist/model/canonical-json.js']),
    );
  });
});

describe('tool-call matching', () => {
  const c = (name: string, args: unknown, id = 'x') => ({
    id,
    type: 'function' as const,
    function: { name, arguments: JSON.stringify(args) },
  });

  it('says none, exact (order of parallel calls ignored), normalized or differs, with multiset counts', () => {
    expect(compareCalls([], [])).toEqual({ match: 'none', predicted: 0, original: 0, matched: 0 });
    expect(
      compareCalls([c('A', { x: 1 }), c('B', { y: [1, 2] })], [c('B', { y: [1, 2] }), c('A', { x: 1 })])
        .match,
    ).toBe('exact');
    expect(compareCalls([c('Read', { p: 'a.ts' })], [c('Read', { p: '/r/a.ts' })], { cwd: '/r' })).toEqual({
      match: 'normalized',
      predicted: 1,
      original: 1,
      matched: 1,
    });
    expect(compareCalls([c('A', { x: 1 }), c('A', { x: 1 })], [c('A', { x: 1 })])).toEqual({
      match: 'differs',
      predicted: 2,
      original: 1,
      matched: 1,
    });
  });

  it('normalises only what does not change a call: a path outside the cwd stays absolute', () => {
    expect(normalizeInput('Read', { p: '/elsewhere/a.ts', n: null, q: '  a  b ' }, { cwd: '/r' })).toEqual({
      p: '/elsewhere/a.ts',
      q: 'a b',
    });
    expect(normalizeInput('Read', { p: '/r' }, { cwd: '/r' })).toEqual({ p: '.' });
    expect(normalizeInput('Read', { p: '/rx/a' }, { cwd: '/r' })).toEqual({ p: '/rx/a' });
  });
});
