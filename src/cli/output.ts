import chalk, { chalkStderr } from 'chalk';

// stdout carries data, stderr carries talk. Colour follows chalk's rules (NO_COLOR, FORCE_COLOR, not a TTY)
// for each stream separately.
export const out = chalk;
export const err = chalkStderr;

export function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function say(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function warn(text: string): void {
  say(`${err.yellow('warning:')} ${text}`);
}

export function formatError(message: string, hint?: string): string {
  const lines = [`${err.red('error:')} ${message}`];
  if (hint) lines.push(`${err.dim('hint:')} ${hint}`);
  return lines.join('\n');
}

/** A table of plain columns; the last column is not padded. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/**
 * A one-line progress bar on stderr, drawn only when stderr is a terminal, at most ten times a second, and
 * erased when done so the data on stdout is never mixed with it.
 */
export function progressBar(label: string): {
  /** Whether the bar is drawn at all (stderr is a terminal, not in CI). */
  readonly enabled: boolean;
  update(done: number, total: number, detail: string): void;
  end(): void;
} {
  const enabled = process.stderr.isTTY === true && !process.env.CI;
  let last = 0;
  let drawn = false;
  return {
    enabled,
    update(done, total, detail) {
      if (!enabled) return;
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const width = 24;
      const filled = total > 0 ? Math.round((done / total) * width) : width;
      const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
      process.stderr.write(`\r\x1b[2K${label} ${bar} ${done}/${total} ${detail}`);
      drawn = true;
    },
    end() {
      if (drawn) process.stderr.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
