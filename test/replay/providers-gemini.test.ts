// The Gemini provider's two conversions (src/replay/providers/gemini.ts): a chat-form request as Gemini's
// contents, and Gemini's answer chunks back in chat form.
import { describe, expect, it } from 'vitest';
import { geminiBody, geminiCompletion } from '../../src/replay/providers/gemini.js';

describe('geminiBody', () => {
  it('puts system text in systemInstruction, merges same-role turns, names each result after its call', () => {
    const body = geminiBody(
      {
        messages: [
          { role: 'system', content: 'You are an agent.' },
          { role: 'user', content: 'Read it.' },
          {
            role: 'assistant',
            content: 'Reading.',
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"a"}' } },
              { id: 'c2', type: 'function', function: { name: 'glob', arguments: '{"pattern":"*"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'A' },
          { role: 'tool', tool_call_id: 'c2', content: 'a b' },
          { role: 'user', content: 'And now?' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'read_file', description: 'Reads.', parameters: { type: 'object' } },
          },
        ],
      },
      256,
    );
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You are an agent.' }] });
    expect(body.contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(body.contents[1]?.parts).toEqual([
      { text: 'Reading.' },
      { functionCall: { id: 'c1', name: 'read_file', args: { file_path: 'a' } } },
      { functionCall: { id: 'c2', name: 'glob', args: { pattern: '*' } } },
    ]);
    expect(body.contents[2]?.parts).toEqual([
      { functionResponse: { id: 'c1', name: 'read_file', response: { output: 'A' } } },
      { functionResponse: { id: 'c2', name: 'glob', response: { output: 'a b' } } },
      { text: 'And now?' },
    ]);
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'read_file', description: 'Reads.', parametersJsonSchema: { type: 'object' } },
        ],
      },
    ]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 256 });
  });
});

describe('geminiCompletion', () => {
  it('joins streamed text, keeps thoughts as reasoning, gives calls ids, reads usage from the last chunk', () => {
    const completion = geminiCompletion([
      { candidates: [{ content: { parts: [{ text: 'Think', thought: true }, { text: 'Hel' }] } }] },
      {
        candidates: [
          { content: { parts: [{ text: 'lo' }, { functionCall: { name: 'ls', args: { dir: '.' } } }] } },
        ],
      },
      {
        candidates: [{ content: { parts: [] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 3 },
      },
    ]);
    expect(completion).toEqual({
      message: {
        role: 'assistant',
        content: 'Hello',
        reasoning_content: 'Think',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{"dir":"."}' } }],
      },
      usage: { prompt_tokens: 12, completion_tokens: 3 },
      finishReason: 'tool_calls',
    });
    expect(
      geminiCompletion([
        { candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'MAX_TOKENS' }] },
      ]).finishReason,
    ).toBe('length');
  });
});
