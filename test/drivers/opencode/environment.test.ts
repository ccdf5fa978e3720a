// The hermetic tree for an opencode run: everything under one private directory, the dependency install
// pre-empted, the plugin present (or not), the workspace untouched, and all of it removed by cleanup().
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../../src/drivers/common/loopback.js';
import {
  makePrivateTree,
  prepareEnvironment,
  sweepStale,
} from '../../../src/drivers/opencode/environment.js';
import {
  answersSocketEnv,
  answersUrlEnv,
  pluginFileName,
  pluginSource,
} from '../../../src/drivers/opencode/plugin.js';

const scratch = mkdtempSync(join(tmpdir(), 'opencode-env-'));
const workspace = mkdtempSync(join(scratch, 'workspace-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('prepareEnvironment', () => {
  it('builds a private tree with config, plugin, database and disabled background work', () => {
    const env = prepareEnvironment({
      workspace,
      baseURL: 'http://127.0.0.1:1/v1',
      answers: { url: 'http://127.0.0.1:2/answer', secret: 'the-answers-secret-0123' },
      parent: scratch,
    });
    expect(env.root.startsWith(scratch)).toBe(true);
    for (const path of [env.configDir, env.dbPath, env.env.HOME ?? ''])
      expect(path.startsWith(env.root)).toBe(true);
    expect(env.env).toMatchObject({
      PWD: workspace,
      OPENCODE_CONFIG_DIR: env.configDir,
      OPENCODE_DB: env.dbPath,
      OPENCODE_DISABLE_PROJECT_CONFIG: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      [answersUrlEnv]: 'http://127.0.0.1:2/answer',
    });
    for (const name of ['XDG_DATA_HOME', 'XDG_CONFIG_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME'])
      expect(env.env[name]?.startsWith(env.root)).toBe(true);
    const config = JSON.parse(readFileSync(join(env.configDir, 'opencode.json'), 'utf8'));
    expect(config.provider.replay.options.baseURL).toBe('http://127.0.0.1:1/v1');
    expect(config.model).toBe('replay/replay');
    expect(config.small_model).toBe('replay/replay');
    expect(env.pluginPath).toBe(join(env.configDir, 'plugins', pluginFileName));
    expect(readFileSync(env.pluginPath ?? '', 'utf8')).toBe(
      pluginSource({ secret: 'the-answers-secret-0123' }),
    );
    // Without a socket the plugin asks over TCP; the placeholder key when none is given.
    expect(env.env[answersSocketEnv]).toBeUndefined();
    expect(config.provider.replay.options.apiKey).toBe('sk-replay');
    // opencode's install of @opencode-ai/plugin finds nothing to do in either config dir.
    for (const dir of [env.configDir, join(env.env.XDG_CONFIG_HOME ?? '', 'opencode')]) {
      expect(readdirSync(join(dir, 'node_modules'))).toEqual([]);
      const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(lock.packages[''].dependencies).toEqual(manifest.dependencies);
      expect(manifest.dependencies).toEqual({ '@opencode-ai/plugin': '1.18.33' });
    }
    expect(readdirSync(workspace)).toEqual([]);
    env.cleanup();
    expect(existsSync(env.root)).toBe(false);
    expect(existsSync(workspace)).toBe(true);
  });

  it("hands opencode the run's secret in files only this user can read, never in its environment", () => {
    const secret = newSecret();
    const root = makePrivateTree(scratch);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(root, 'owner.pid'), 'utf8')).toBe(`${process.pid}\n`);
    const socket = join(root, 'answers.sock');
    const env = prepareEnvironment({
      root,
      workspace,
      baseURL: 'http://127.0.0.1:1/v1',
      apiKey: secret,
      answers: { url: 'http://localhost:0/answer', socket, secret },
    });
    expect(env.root).toBe(root);
    expect(env.env[answersUrlEnv]).toBe('http://localhost:0/answer');
    expect(env.env[answersSocketEnv]).toBe(socket);
    const configFile = join(env.configDir, 'opencode.json');
    expect(JSON.parse(readFileSync(configFile, 'utf8')).provider.replay.options.apiKey).toBe(secret);
    expect(readFileSync(env.pluginPath ?? '', 'utf8')).toContain(JSON.stringify(secret));
    for (const file of [configFile, env.pluginPath ?? '']) expect(statSync(file).mode & 0o777).toBe(0o600);
    // Every process opencode starts inherits its environment: the secret is not in it.
    expect(JSON.stringify(env.env)).not.toContain(secret);
    env.cleanup();
    expect(existsSync(root)).toBe(false);
  });

  it('leaves the plugin out on request', () => {
    const env = prepareEnvironment({
      workspace,
      baseURL: 'http://127.0.0.1:1/v1',
      plugin: false,
      parent: scratch,
    });
    expect(env.pluginPath).toBeUndefined();
    expect(existsSync(join(env.configDir, 'plugins'))).toBe(false);
    expect(env.env[answersUrlEnv]).toBeUndefined();
    env.cleanup();
  });

  it('removes the trees of killed replays (owner PID gone), and only those', () => {
    const parent = mkdtempSync(join(scratch, 'sweep-'));
    // A PID that surely exited: a child that ran and was reaped.
    const dead = spawnSync('true').pid as number;
    const killed = prepareEnvironment({ workspace, baseURL: 'http://127.0.0.1:9/v1', parent });
    const running = prepareEnvironment({ workspace, baseURL: 'http://127.0.0.1:9/v1', parent });
    expect(readFileSync(join(running.root, 'owner.pid'), 'utf8')).toBe(`${process.pid}\n`);
    writeFileSync(join(killed.root, 'owner.pid'), `${dead}\n`);
    const unowned = mkdtempSync(join(parent, 'replay-opencode-'));
    const unrelated = mkdtempSync(join(parent, 'something-else-'));
    writeFileSync(join(unrelated, 'owner.pid'), `${dead}\n`);
    expect(sweepStale(parent)).toEqual([killed.root]);
    expect(existsSync(killed.root)).toBe(false);
    for (const kept of [running.root, unowned, unrelated]) expect(existsSync(kept)).toBe(true);
    // A new environment sweeps by itself.
    writeFileSync(join(running.root, 'owner.pid'), `${dead}\n`);
    const next = prepareEnvironment({ workspace, baseURL: 'http://127.0.0.1:9/v1', parent });
    expect(existsSync(running.root)).toBe(false);
    next.cleanup();
  });
});
