// docs/api.md opens with a table of contents: every `## ` and `### ` heading of the reference is
// in it, in the document's order, linked by the anchor the heading really has (issue 47 item 9:
// it missed 15 of 44 sections, and one link pointed at a heading since renamed).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anchors, headings, readText, slug } from '../support/markdown.js';
import { REPO } from '../support/typecheck-consumer.js';

const text = readText(REPO, 'docs/api.md');
const sections = headings(text).filter((heading) => heading.level === 2 || heading.level === 3);
const firstSection = sections[0]?.line ?? 0;

/** The contents: the `- [text](#anchor)` items before the first section. */
const contents = text
  .split('\n')
  .slice(0, firstSection - 1)
  .flatMap((line) => {
    const item = /^\s*- \[(.*)\]\(#([^)]*)\)/.exec(line);
    return item === null ? [] : [{ text: item[1] as string, anchor: item[2] as string }];
  });

describe('docs/api.md, its table of contents', () => {
  it('finds the sections and the contents', () => {
    assert.ok(sections.length >= 40, `only ${sections.length} sections found`);
    assert.ok(contents.length > 0, 'no table of contents before the first section');
  });

  it('lists every ## and ### heading, in order, with its own text and anchor', () => {
    assert.deepEqual(
      contents.map((entry) => `${entry.text} -> #${entry.anchor}`),
      sections.map((heading) => `${heading.text} -> #${slug(heading.text)}`),
    );
  });

  it('links only anchors the document has', () => {
    const known = anchors(text);
    assert.deepEqual(
      contents.filter((entry) => !known.has(entry.anchor)).map((entry) => entry.anchor),
      [],
    );
  });
});
