// A full disk under the store: every command says so in words (which store, how much is free, what to do), an
// ingest stopped by it names the log it stopped at and keeps every log before it, a replay stopped by it keeps
// the run whole (all its sessions) and goes on with --resume, reading commands still read, and the store is never
// damaged. The disk is a small tmpfs mounted in a mount namespace of the test's own (`unshare`), so no real disk
// is filled and nothing outlives the test; one shell script holds the whole scenario, since the tmpfs lives only
// as long as the namespace.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, root, tempDir } from '../helpers/cli.js';

const namespaces =
  spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', 'mount -t tmpfs none /mnt'])
    .status === 0;

// `step NAME ARGS…` runs the CLI and keeps its stdout, stderr and exit code in $OUT/NAME.*; `fill KIB` leaves
// about that many KiB free on the disk (rounded to its pages).
const script = `
set -u
mount -t tmpfs -o size=48m none "$DISK" || exit 90
step() { name=$1; shift; NO_COLOR=1 "$NODE" "$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; }
fill() {
  rm -f "$DISK/junk"
  avail=$(df -k "$DISK" | tail -1 | awk '{print $4}')
  if [ "$avail" -gt "$1" ]; then dd if=/dev/zero of="$DISK/junk" bs=1024 count=$((avail - $1)) 2>/dev/null; fi
  [ "$1" -gt 0 ] || cat /dev/zero >>"$DISK/junk" 2>/dev/null
  return 0
}
cd "$DISK"
step first ingest "$SAMPLES" --db "$DISK/s.db"
# closed cleanly: no -wal or -shm beside the store, and no room to make them
fill 0
step read sessions --db "$DISK/s.db" --json
step refused replay --all --db "$DISK/s.db" --out "$OUT/refused.jsonl"
step none runs --db "$DISK/s.db" --json
fill 100
step stopped ingest "$LOGS" --db "$DISK/s.db"
fill 60
step replay replay --all --db "$DISK/s.db" --out "$OUT/pairs.jsonl"
rm -f "$DISK/junk"
step resumed replay --resume latest --db "$DISK/s.db" --json
step plain replay --all --db "$DISK/s.db" --out "$OUT/plain.jsonl" --json
step again ingest "$LOGS" --db "$DISK/s.db"
cp "$DISK"/s.db* "$OUT/"
`;

let dir: ReturnType<typeof tempDir>;
const out = (name: string) => ({
  stdout: readFileSync(join(dir.path, `${name}.out`), 'utf8'),
  stderr: readFileSync(join(dir.path, `${name}.err`), 'utf8'),
  exitCode: Number(readFileSync(join(dir.path, `${name}.rc`), 'utf8')),
});

beforeAll(() => {
  if (!namespaces) return;
  dir = tempDir('full-disk-');
  const disk = join(dir.path, 'disk');
  writeFileSync(join(dir.path, 'scenario.sh'), script);
  spawnSync('mkdir', [disk]);
  const ran = spawnSync(
    'unshare',
    ['--user', '--map-root-user', '--mount', 'sh', join(dir.path, 'scenario.sh')],
    {
      env: {
        ...process.env,
        DISK: disk,
        OUT: dir.path,
        NODE: process.execPath,
        BIN: bin,
        SAMPLES: join(root, 'sample-sessions'),
        LOGS: join(root, 'test', 'fixtures', 'real'),
      },
      encoding: 'utf8',
    },
  );
  expect(ran.status, ran.stderr).toBe(0);
});

afterAll(() => dir?.remove());

describe.runIf(namespaces)('a full disk under the store', () => {
  it('stops an ingest with the log it stopped at; those before it stay, and the next ingest goes on', () => {
    expect(out('first').exitCode).toBe(0);
    const stopped = out('stopped');
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stderr).toMatch(
      /error: the disk holding the store \S+s\.db is full \(\d+ (bytes|KiB) free\): SQLite could not write \(.+\) while storing \S+\.json\S* \(file (\d+) of (\d+)\): the logs before it are in the store, it and the \d+ after it are not/,
    );
    expect(stopped.stderr).toContain('hint: free some space there and run ingest again');
    expect(stopped.stderr).not.toContain('DEBUG');
    const again = out('again');
    expect(again.exitCode, again.stderr).toBe(0);
    // the logs stored before the stop are passed over as unchanged, the rest read
    expect(`${again.stdout}${again.stderr}`).toMatch(/sessions \d+ new, \d+ updated, [1-9]\d* unchanged/);
  });

  it('still reads the store with no byte free (no room for its -shm file); a replay cannot begin, says so, makes no run', () => {
    const read = out('read');
    expect(read.exitCode, read.stderr).toBe(0);
    expect((JSON.parse(read.stdout) as unknown[]).length).toBe(6);
    // before anything ran: exit 2
    const refused = out('refused');
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/error: the disk holding the store \S+ is full \(0 bytes free\)/);
    expect(refused.stderr).toContain('hint: free some space there and run it again');
    const none = out('none');
    expect(none.exitCode, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual([]);
  });

  it('stops a replay midway with the run to resume, whole: resumed, it is the run an uninterrupted one is', () => {
    const stopped = out('replay');
    expect(stopped.exitCode).toBe(1);
    expect(stopped.stderr).toContain('is full');
    const runId = /replay --resume (run_\w+)/.exec(stopped.stderr)?.[1];
    expect(runId, stopped.stderr).toBeDefined();
    const resumed = out('resumed');
    const plain = out('plain');
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(plain.exitCode, plain.stderr).toBe(0);
    type Figures = { id: string; status: string; sessions: number; turnsDone: number; turnsFailed: number };
    const run = JSON.parse(resumed.stdout) as Figures;
    const reference = JSON.parse(plain.stdout) as Figures;
    // Every session of the run, every turn once: what the same replay on a disk with room does.
    expect(run).toMatchObject({ id: runId, status: 'done', turnsFailed: 0 });
    expect(run.sessions).toBe(reference.sessions);
    expect(run.turnsDone).toBe(reference.turnsDone);
    expect(run.sessions).toBeGreaterThanOrEqual(6);
    const keys = (file: string) =>
      readFileSync(join(dir.path, file), 'utf8')
        .trim()
        .split('\n')
        .map((line) => {
          const pair = JSON.parse(line) as { session: string; turn: number };
          return `${pair.session}#${pair.turn}`;
        });
    expect(keys('pairs.jsonl')).toHaveLength(run.turnsDone);
    expect(new Set(keys('pairs.jsonl'))).toEqual(new Set(keys('plain.jsonl')));
  });

  it('leaves the store whole', () => {
    const db = new Database(join(dir.path, 's.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      // two runs (the resumed one, the reference), each with every session it was begun with
      const perRun = db.prepare('SELECT count(*) AS n FROM run_sessions GROUP BY run_id').all() as {
        n: number;
      }[];
      expect(perRun).toHaveLength(2);
      expect(perRun[0]?.n).toBe(perRun[1]?.n);
    } finally {
      db.close();
    }
  });
});
