import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The documentation's links resolve: every relative Markdown link in README.md and docs/**.md names
 * a file or folder that exists, and a `#anchor` into a Markdown file names one of its headings
 * (GitHub's slug). README.md stays short, and every decision record has its number, status and
 * date and is in the index (docs/decisions/README.md).
 */
const ROOT = resolve(__dirname, '../..');
const README_MAX_LINES = 200;

interface Link {
  file: string;
  line: number;
  target: string;
}

function markdownFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) return markdownFiles(path);
      return entry.isFile() && entry.name.endsWith('.md') ? [path] : [];
    })
    .sort();
}

/** The lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((raw, index) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
    } else if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    } else {
      lines.push({ line: index + 1, text: raw });
    }
  });
  return lines;
}

const withoutCodeSpans = (text: string): string => text.replace(/(`+)[\s\S]*?\1/g, '');

/** `[text](target)` and `![alt](target)`, with an optional title; the target unwrapped from `<…>`. */
const LINK = /\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g;

function linksOf(file: string): Link[] {
  const links: Link[] = [];
  for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
    for (const match of withoutCodeSpans(text).matchAll(LINK)) {
      links.push({ file, line, target: match[1].replace(/^<|>$/g, '') });
    }
  }
  return links;
}

/** GitHub's heading anchor: lowercase, punctuation but `-` and `_` dropped, spaces → `-`. */
function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** Every anchor a Markdown file defines: heading slugs (repeats get -1, -2, …) and HTML ids. */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i; // http:, https:, mailto: and any other scheme

/** What is wrong with a link, or undefined when it resolves. */
function problemOf(link: Link): string | undefined {
  const hash = link.target.indexOf('#');
  const path = decodeURI(hash < 0 ? link.target : link.target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
  const target =
    path === '' ? link.file : path.startsWith('/') ? join(ROOT, path) : resolve(dirname(link.file), path);
  if (!existsSync(target)) return `no such file: ${relative(ROOT, target)}`;
  if (anchor === undefined || !target.endsWith('.md') || !statSync(target).isFile()) return undefined;
  if (!anchorsOf(target).has(anchor)) return `no heading #${anchor} in ${relative(ROOT, target)}`;
  return undefined;
}

const documents = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

describe('documentation links', () => {
  it('finds the documents and their links', () => {
    expect(documents.length).toBeGreaterThan(5);
    expect(documents.flatMap(linksOf).length).toBeGreaterThan(50);
  });

  it('resolves every relative link, anchors included', () => {
    const broken = documents
      .flatMap(linksOf)
      .filter((link) => !EXTERNAL.test(link.target))
      .flatMap((link) => {
        const problem = problemOf(link);
        return problem === undefined
          ? []
          : [`${relative(ROOT, link.file)}:${link.line} (${link.target}): ${problem}`];
      });
    expect(broken).toEqual([]);
  });

  it('keeps README.md at most 200 lines', () => {
    const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const lines = text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('slugs headings as GitHub does', () => {
    expect(githubSlug('Admin and test routes (`/_sandbox`)')).toBe('admin-and-test-routes-_sandbox');
    expect(githubSlug("Inbound: the provider's events")).toBe('inbound-the-providers-events');
    expect(githubSlug('Payments: effects outside the database')).toBe(
      'payments-effects-outside-the-database',
    );
    expect(githubSlug('The create goal: blocked')).toBe('the-create-goal-blocked');
  });
});

describe('decision records', () => {
  const folder = join(ROOT, 'docs/decisions');
  const records = readdirSync(folder)
    .filter((name) => /^\d{4}-.+\.md$/.test(name))
    .sort();
  const index = readFileSync(join(folder, 'README.md'), 'utf8');

  it('are numbered once each, with a title, status and date, and listed in the index', () => {
    const problems = records.flatMap((name) => {
      const number = name.slice(0, 4);
      const lines = readFileSync(join(folder, name), 'utf8').split('\n');
      const found: string[] = [];
      if (!new RegExp(`^# ${number}\\. \\S`).test(lines[0]))
        found.push(`first line is not "# ${number}. Title"`);
      if (!lines.some((line) => /^Status: (proposed|accepted|deprecated|superseded by \d{4})$/.test(line))) {
        found.push('no "Status: accepted" (or proposed, deprecated, superseded by NNNN) line');
      }
      if (!lines.some((line) => /^Date: \d{4}-\d{2}-\d{2}$/.test(line)))
        found.push('no "Date: YYYY-MM-DD" line');
      if (!index.includes(`](${name})`)) found.push('not linked from docs/decisions/README.md');
      return found.map((problem) => `docs/decisions/${name}: ${problem}`);
    });
    const numbers = records.map((name) => name.slice(0, 4));
    const repeated = numbers.filter((number, i) => numbers.indexOf(number) !== i);
    expect(records.length).toBeGreaterThan(0);
    expect([...problems, ...repeated.map((number) => `number ${number} is used twice`)]).toEqual([]);
  });
});
