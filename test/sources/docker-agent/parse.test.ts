import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sessionId } from '../../../src/model/ids.js';
import { type Message, outputText, type Part, toolCalls } from '../../../src/model/session.js';
import { splitTurns } from '../../../src/model/turns.js';
import { dockerAgent } from '../../../src/sources/docker-agent/index.js';
import type { ParsedSession } from '../../../src/sources/types.js';
import { tempDir } from '../../helpers/cli.js';
import { call, createStore, latest, type Store, usage } from './store.js';

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir('docker-agent-');
});
afterEach(() => dir.remove());

/** A store at `version`, filled and closed (docker-agent checkpoints on close), then parsed. */
function parse(fill: (store: Store) => void, version = latest) {
  const file = join(dir.path, 'session.db');
  const store = createStore(file, { version });
  fill(store);
  store.close();
  const result = dockerAgent.parseFile(file);
  const sessions = [...result.sessions];
  return { ...result, sessions, file };
}

function only(sessions: ParsedSession[], sourceId: string): ParsedSession {
  const session = sessions.find((s) => s.sourceId === sourceId);
  if (!session) throw new Error(`no session ${sourceId}`);
  return session;
}

const texts = (message: Message | undefined) =>
  (message?.parts ?? [])
    .filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text);

const main = 'a1b2c3d4-0000-4000-8000-000000000001';

describe('docker-agent adapter', () => {
  it('reads a plain conversation: roles, text, model, usage, times in UTC, rows traced back', () => {
    const { sessions, file, warnings } = parse((store) => {
      store.session({ id: main, title: 'Fix the flaky test', workingDir: '/home/ada/api' });
      store.message(main, {
        role: 'user',
        content: 'Why does test_login fail?',
        created_at: '2025-11-03T14:05:09+01:00',
      });
      store.message(
        main,
        {
          role: 'assistant',
          content: 'It races the token refresh.',
          created_at: '2025-11-03T14:05:14+01:00',
          usage: usage(1200, 40, 800, 0),
          model: 'anthropic/claude-sonnet-4-5',
          finish_reason: 'stop',
        },
        { agent: 'root' },
      );
    });
    expect(warnings).toEqual([]);
    const session = only(sessions, main);
    expect(session).toMatchObject({
      id: sessionId('docker-agent', main),
      agent: 'docker-agent',
      kind: 'main',
      title: 'Fix the flaky test',
      cwd: '/home/ada/api',
      startedAt: '2025-11-03T13:05:09.000Z',
      endedAt: '2025-11-03T13:05:14.000Z',
    });
    const [user, answer] = session.messages;
    expect(user).toMatchObject({ role: 'user', timestamp: '2025-11-03T13:05:09.000Z' });
    expect(user?.injected).toBeUndefined();
    expect(answer).toMatchObject({
      role: 'assistant',
      model: 'anthropic/claude-sonnet-4-5',
      usage: { inputTokens: 1200, outputTokens: 40, cacheReadTokens: 800, cacheWriteTokens: 0 },
      nativeId: `${main}/2`,
      source: { db: file, table: 'session_items', row: '2' },
    });
    expect(texts(answer)).toEqual(['It races the token refresh.']);
    const turns = splitTurns(session.messages);
    expect(turns).toHaveLength(1);
    expect(turns[0]?.context.map((m) => m.role)).toEqual(['user']);
  });

  it('pairs tool calls with their results, arguments parsed, an error result kept as an error', () => {
    const { sessions } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'user', content: 'List the tests and run them' });
      store.message(
        main,
        {
          role: 'assistant',
          reasoning_content: 'Two things at once.',
          thinking_signature: 'sig-1',
          tool_calls: [
            call('toolu_1', 'list_directory', { path: 'tests' }),
            call('toolu_2', 'shell', { cmd: 'go test ./...' }),
          ],
          finish_reason: 'tool_calls',
        },
        { agent: 'root' },
      );
      store.message(
        main,
        { role: 'tool', content: 'login_test.go', tool_call_id: 'toolu_1' },
        { agent: 'root' },
      );
      store.message(
        main,
        { role: 'tool', content: 'exit status 1', tool_call_id: 'toolu_2', is_error: true },
        { agent: 'root' },
      );
      store.message(main, { role: 'assistant', content: 'One test fails.' }, { agent: 'root' });
    });
    const { messages } = only(sessions, main);
    const calls = toolCalls(messages[1] as Message);
    expect(messages[1]?.parts[0]).toEqual({
      type: 'reasoning',
      text: 'Two things at once.',
      signature: 'sig-1',
    });
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ['list_directory', { path: 'tests' }],
      ['shell', { cmd: 'go test ./...' }],
    ]);
    expect(calls.every((c) => !c.unanswered)).toBe(true);
    const [first] = splitTurns(messages);
    expect(first?.results.map((r) => [r.name, outputText(r.output), r.isError])).toEqual([
      ['list_directory', 'login_test.go', false],
      ['shell', 'exit status 1', true],
    ]);
  });

  it('marks a call that never got a result (an interrupted turn) unanswered', () => {
    const { sessions } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'user', content: 'Delete the build dir' });
      store.message(
        main,
        { role: 'assistant', tool_calls: [call('toolu_9', 'shell', { cmd: 'rm -rf build' })] },
        { agent: 'root' },
      );
      store.message(main, { role: 'user', content: 'Stop, not that one' });
      store.message(main, { role: 'assistant', content: 'Stopped.' }, { agent: 'root' });
    });
    const { messages } = only(sessions, main);
    expect(toolCalls(messages[1] as Message)[0]).toMatchObject({ id: 'toolu_9', unanswered: true });
    const turns = splitTurns(messages);
    expect(turns[0]?.results[0]).toMatchObject({ callId: 'toolu_9', isError: true, synthetic: true });
    // The next turn is given a synthetic error for the dangling call, as providers require.
    expect(turns[1]?.context.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
  });

  it('turns a summary item into the summary the model saw; later turns see it and the kept tail, not the history', () => {
    let kept = 0;
    const { sessions } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'user', content: 'Port the parser to Go' }); // item 0
      store.message(main, { role: 'assistant', content: 'Ported lexer.' }, { agent: 'root' }); // 1
      kept = store.message(main, { role: 'user', content: 'Now the printer' }); // 2
      store.message(main, { role: 'assistant', content: 'Ported printer.' }, { agent: 'root' }); // 3
      store.summary(main, 'The lexer is ported.', 2); // 4: first_kept_entry = item 2
      store.message(main, { role: 'user', content: 'Add tests' }); // 5
      store.message(main, { role: 'assistant', content: 'Tests added.' }, { agent: 'root' }); // 6
    });
    const { messages } = only(sessions, main);
    const summary = messages.find((m) => m.compaction);
    expect(summary).toMatchObject({ role: 'user', injected: true, compaction: true });
    expect(texts(summary)).toEqual(['Session Summary: The lexer is ported.']);
    expect(summary?.preserved).toEqual([`${main}/${kept}`, `${main}/${kept + 1}`]);
    const last = splitTurns(messages).at(-1);
    expect(last?.context.flatMap(texts)).toEqual([
      'Session Summary: The lexer is ported.',
      'Now the printer',
      'Ported printer.',
      'Add tests',
    ]);
  });

  it('in a schema before first_kept_entry (019), a summary keeps nothing before it', () => {
    const { sessions } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'user', content: 'Start' });
      store.message(main, { role: 'assistant', content: 'Started.' }, { agent: 'root' });
      store.summary(main, 'We started.');
      store.message(main, { role: 'user', content: 'Go on' });
      store.message(main, { role: 'assistant', content: 'Going.' }, { agent: 'root' });
    }, 19);
    const last = splitTurns(only(sessions, main).messages).at(-1);
    expect(last?.context.flatMap(texts)).toEqual(['Session Summary: We started.', 'Go on']);
  });

  it('reads a transferred task as a sub-session: parent link, spawning call, implicit prompt, agent in the title', () => {
    const child = 'c0ffee00-0000-4000-8000-000000000002';
    const task = 'Find where the config is loaded';
    const { sessions, spawns } = parse((store) => {
      store.session({ id: main, title: 'Config bug', workingDir: '/home/ada/api' });
      store.message(main, { role: 'user', content: 'Why is the config ignored?' });
      store.message(
        main,
        {
          role: 'assistant',
          tool_calls: [
            call('toolu_t', 'transfer_task', { agent: 'librarian', task, expected_output: 'a path' }),
          ],
        },
        { agent: 'root' },
      );
      // transfer_task blocks: the child is stored before the call's result.
      store.subsession(main, { id: child, title: 'Transferred task' }, (s) => {
        s.message(child, {
          role: 'system',
          content: `You are a member of a team of agents. Your goal is to complete the following task:\n\n<task>\n${task}\n</task>\n\n<expected_output>\na path\n</expected_output>`,
        });
        s.message(child, { role: 'user', content: 'Please proceed.' }, { implicit: true });
        s.message(child, { role: 'assistant', content: 'config/load.go' }, { agent: 'librarian' });
      });
      store.message(
        main,
        { role: 'tool', content: 'config/load.go', tool_call_id: 'toolu_t' },
        { agent: 'root' },
      );
      store.message(
        main,
        { role: 'assistant', content: 'It is loaded in config/load.go.' },
        { agent: 'root' },
      );
    });
    const parent = only(sessions, main);
    const sub = only(sessions, child);
    expect(sub).toMatchObject({
      kind: 'subagent',
      parentId: parent.id,
      cwd: '/home/ada/api',
      title: `librarian: ${task}`,
    });
    expect(sub.messages.map((m) => [m.role, m.injected ?? false])).toEqual([
      ['system', false],
      ['user', true],
      ['assistant', false],
    ]);
    expect(spawns).toEqual([{ parentSourceId: main, childSourceId: child, toolCallId: 'toolu_t' }]);
    // The parent's model never saw the child's messages.
    expect(
      splitTurns(parent.messages)
        .flatMap((t) => t.context)
        .flatMap(texts),
    ).not.toContain('Please proceed.');
  });

  it('links a background agent finished later to its call by the task text', () => {
    const child = 'c0ffee00-0000-4000-8000-000000000003';
    const { spawns } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'user', content: 'Audit deps and lint' });
      store.message(
        main,
        {
          role: 'assistant',
          tool_calls: [
            call('toolu_a', 'run_background_agent', { agent: 'auditor', task: 'Audit the dependencies' }),
            call('toolu_b', 'run_background_agent', { agent: 'linter', task: 'Lint the repo' }),
          ],
        },
        { agent: 'root' },
      );
      store.message(main, {
        role: 'tool',
        content: 'Background agent task started with ID: 1',
        tool_call_id: 'toolu_a',
      });
      store.message(main, {
        role: 'tool',
        content: 'Background agent task started with ID: 2',
        tool_call_id: 'toolu_b',
      });
      store.subsession(main, { id: child, title: 'Background agent task' }, (s) => {
        s.message(child, {
          role: 'system',
          content: 'Your goal is to complete the following task:\n\n<task>\nLint the repo\n</task>',
        });
        s.message(child, { role: 'user', content: 'Please proceed.' }, { implicit: true });
        s.message(child, { role: 'assistant', content: 'No lint errors.' }, { agent: 'linter' });
      });
    });
    expect(spawns).toEqual([{ parentSourceId: main, childSourceId: child, toolCallId: 'toolu_b' }]);
  });

  it('keeps docker-agent-written text apart: stored system prompts stay system, implicit user prompts are injected', () => {
    const { sessions } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'system', content: 'You are the skill runner.' });
      store.message(main, { role: 'user', content: 'Summarise CHANGELOG.md' }, { implicit: true });
      store.message(main, { role: 'assistant', content: 'Three releases.' }, { agent: 'root' });
    });
    const session = only(sessions, main);
    expect(session.messages.map((m) => [m.role, m.injected ?? false])).toEqual([
      ['system', false],
      ['user', true],
      ['assistant', false],
    ]);
    // No prompt typed by a person: the title falls back to nothing rather than to docker-agent's own text.
    expect(session.title).toBeUndefined();
    expect(splitTurns(session.messages)[0]?.context.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('skips bad rows with a warning naming table and row, counts unknown kinds, and reads the rest', () => {
    const rows: Record<string, number> = {};
    const { sessions, warnings, notes, skipped, file } = parse((store) => {
      store.session({ id: main });
      store.message(main, { role: 'user', content: 'Hello' });
      rows.json = store.item(main, {
        item_type: 'message',
        agent_name: 'root',
        message_json: '{"role":"assistant","content":',
      });
      rows.role = store.item(main, {
        item_type: 'message',
        agent_name: 'root',
        message_json: '{"content":"no role"}',
      });
      rows.empty = store.item(main, { item_type: 'message', agent_name: 'root', message_json: null });
      rows.summary = store.item(main, { item_type: 'summary', summary_text: '' });
      store.item(main, { item_type: 'checkpoint', message_json: '{}' });
      store.item(main, { item_type: 'error', message_json: '{}' });
      store.message(main, { role: 'assistant', content: 'Hi.' }, { agent: 'root' });
    });
    expect(warnings.map((w) => [w.file, w.message.replace(/ \(.*\)/, '')])).toEqual([
      [file, `session_items row ${rows.json}: not valid JSON; skipped`],
      [file, `session_items row ${rows.role}: the message has no valid role; skipped`],
      [file, `session_items row ${rows.empty}: no JSON in message_json; skipped`],
      [file, `session_items row ${rows.summary}: summary item without summary_text; skipped`],
    ]);
    expect(skipped).toBe(4);
    expect(notes).toEqual([
      "1 item(s) of unknown kind 'checkpoint' kept out of the conversation",
      '1 error/termination item(s) kept out of the conversation (never sent to a model)',
    ]);
    expect(only(sessions, main).messages.flatMap(texts)).toEqual(['Hello', 'Hi.']);
  });

  it('reads the legacy schema (013): items as JSON in sessions.messages, sub-sessions embedded in them', () => {
    const child = 'c0ffee00-0000-4000-8000-000000000004';
    const { sessions, spawns, file } = parse((store) => {
      store.session({ id: main, title: 'Old session' }, [
        { message: { agentName: '', message: { role: 'user', content: 'Explain the Makefile' } } },
        {
          message: {
            agentName: 'root',
            message: {
              role: 'assistant',
              content: '',
              tool_calls: [call('call_1', 'transfer_task', { agent: 'docs', task: 'Read the Makefile' })],
            },
          },
        },
        {
          sub_session: {
            id: child,
            title: '',
            messages: [
              {
                message: {
                  agentName: '',
                  message: { role: 'system', content: '<task>\nRead the Makefile\n</task>' },
                },
              },
              {
                message: {
                  agentName: '',
                  message: { role: 'user', content: 'Please proceed.' },
                  implicit: true,
                },
              },
              {
                message: {
                  agentName: 'docs',
                  message: { role: 'assistant', content: 'It builds two binaries.' },
                },
              },
            ],
            created_at: '2025-06-01T10:00:00Z',
          },
        },
        {
          message: {
            agentName: 'root',
            message: { role: 'tool', content: 'It builds two binaries.', tool_call_id: 'call_1' },
          },
        },
        { summary: 'The Makefile builds two binaries.' },
        { message: { agentName: '', message: { role: 'user', content: 'Thanks' } } },
        { message: { agentName: 'root', message: { role: 'assistant', content: 'You are welcome.' } } },
      ]);
    }, 13);
    const parent = only(sessions, main);
    expect(parent.messages[0]).toMatchObject({
      nativeId: `${main}/messages/0`,
      source: { db: file, table: 'sessions', row: `${main}/messages/0` },
    });
    expect(splitTurns(parent.messages).at(-1)?.context.flatMap(texts)).toEqual([
      'Session Summary: The Makefile builds two binaries.',
      'Thanks',
    ]);
    expect(only(sessions, child)).toMatchObject({
      kind: 'subagent',
      parentId: parent.id,
      title: 'docs: Read the Makefile',
    });
    expect(spawns).toEqual([{ parentSourceId: main, childSourceId: child, toolCallId: 'call_1' }]);
  });

  it('reads the oldest cagent rows: bare messages with agentFilename, no item wrapper', () => {
    const { sessions } = parse((store) => {
      store.session({ id: main }, [
        { agentFilename: 'agent.yaml', agentName: '', message: { role: 'user', content: 'hi' } },
        { agentFilename: 'agent.yaml', agentName: 'root', message: { role: 'assistant', content: 'hello' } },
      ]);
    }, 4);
    expect(only(sessions, main).messages.map((m) => [m.role, texts(m)[0]])).toEqual([
      ['user', 'hi'],
      ['assistant', 'hello'],
    ]);
  });

  it('reads attachments: data-URL images, inline text documents, legacy file parts', () => {
    const { sessions } = parse((store) => {
      store.session({ id: main });
      store.message(main, {
        role: 'user',
        content: 'What is in these?',
        multi_content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
          {
            type: 'document',
            document: { name: 'notes.md', mime_type: 'text/markdown', source: { inline_text: '# Notes' } },
          },
          { type: 'file', file: { path: '/tmp/report.pdf', mime_type: 'application/pdf' } },
        ],
      });
      store.message(main, { role: 'assistant', content: 'A logo, notes and a report.' }, { agent: 'root' });
    });
    expect(only(sessions, main).messages[0]?.parts).toEqual([
      { type: 'text', text: 'What is in these?' },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'text', text: '# Notes' },
      { type: 'text', text: '[file /tmp/report.pdf]' },
    ]);
  });
});
