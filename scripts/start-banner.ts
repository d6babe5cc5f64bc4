import type { AppConfig } from '@chronicle/platform';

/** The API's log line that carries the development key (auth/development-key.ts). */
const KEY_LINE = /development API key for user .*?: (chr_[A-Za-z0-9_-]+)/;
/** After the API is ready, how long to wait for its development-key line before the banner. */
const KEY_GRACE_MS = 1_500;

/**
 * `npm start`'s human output: the JSON log lines of its processes in, a banner and one line per
 * warning or error out. The key goes only into the link's fragment, which browsers never send.
 */
export class StartBanner {
  private readonly ready = new Set<string>();
  private key: string | null = null;
  private printed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: Pick<AppConfig, 'host' | 'port'>,
    private readonly apps: number,
    private readonly write: (text: string) => void,
  ) {}

  get url(): string {
    const host = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(this.config.host)
      ? 'localhost'
      : this.config.host;
    return `http://${host}:${this.config.port}`;
  }

  line(line: string): void {
    let entry: { level?: string; app?: string; msg?: string; error?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      this.write(`${line}\n`);
      return;
    }
    const msg = String(entry.msg ?? '');
    const key = KEY_LINE.exec(msg);
    if (key) {
      this.key = key[1];
      if (this.printed) this.write(this.signInLine());
      return;
    }
    if (entry.level === 'warn' || entry.level === 'error') {
      // The cause rides in `error` ("start-up failed" alone does not say the port is taken).
      const cause = entry.error === undefined ? '' : `: ${String(entry.error)}`;
      this.write(`${entry.app ?? '?'} ${entry.level}: ${msg}${cause}\n`);
      return;
    }
    if (msg === `${entry.app} ready`) {
      this.ready.add(String(entry.app));
      if (this.ready.size === this.apps && !this.timer && !this.printed) {
        this.timer = setTimeout(() => this.print(), this.key ? 0 : KEY_GRACE_MS);
        this.timer.unref();
      }
    }
  }

  private print(): void {
    this.printed = true;
    const lines = [
      '',
      `  Chronicle is running: ${this.url}/`,
      `  API docs:             ${this.url}/docs`,
    ];
    this.write(`${lines.join('\n')}\n`);
    if (this.key) this.write(this.signInLine());
    else {
      this.write(
        '  Sign in with your API key (a development key is printed on the first start only).\n',
      );
    }
    this.write('  Warnings and errors appear below; LOG_FORMAT=json shows every log line.\n\n');
  }

  private signInLine(): string {
    return `  Open signed in:       ${this.url}/#key=${encodeURIComponent(this.key ?? '')}\n`;
  }
}
