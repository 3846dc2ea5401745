/** One JSON log line of the application. */
export interface LogLine {
  level: string;
  msg: string;
  req?: { id: string; method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
  companyId?: string;
  operation?: string;
  idempotencyKey?: string;
  err?: { type: string; message: string; stack: string };
  [field: string]: unknown;
}

/**
 * Everything the application writes to stdout (its JSON logs), kept here instead of printed:
 * call `capture()` in a `beforeAll` (Jest's `restoreAllMocks` in `afterAll` ends it).
 */
export class CapturedLogs {
  written: string[] = [];

  capture(): void {
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      this.written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  }

  clear(): void {
    this.written = [];
  }

  lines(): LogLine[] {
    return this.written
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** The one request line of a request id (written when its response finished). */
  requestLine(requestId: string): LogLine {
    const lines = this.lines().filter(
      (line) => line.msg.startsWith('request ') && line.req?.id === requestId,
    );
    expect(lines).toHaveLength(1);
    return lines[0];
  }
}
