import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/common/errors.js';
import { GENERIC_PROFILE, loadProfiles } from '../../lib/perceive/profile.js';
import { boundedTest, checkRegexSafety, MAX_MATCH_CHARS } from '../../lib/perceive/regex-safety.js';
import { builtinProfilesDir, loadProfileFiles } from '../../lib/driver/profile-files.js';

function issuesOf(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CONFIG_INVALID');
    return [...(err as ConfigError).issues];
  }
  throw new Error('expected a ConfigError');
}

describe('the built-in profiles', () => {
  const set = loadProfileFiles();

  it('load from profiles/ next to the package: shell and the five AI CLIs', () => {
    expect(builtinProfilesDir()).toMatch(/profiles\/?$/);
    expect(set.ids.sort()).toEqual(['aider', 'claude-code', 'codex', 'gemini', 'opencode', 'shell']);
  });

  it('carry their soft-newline convention and read-side transform as data', () => {
    expect(set.get('aider')?.softNewline).toBe('meta-enter');
    expect(set.get('claude-code')?.softNewline).toBe('bracketed-paste');
    expect(set.get('claude-code')?.transform.stripGhost).toBe(true);
    expect(set.get('claude-code')?.recommendedEnv).toEqual({ CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION: 'false' });
  });

  it('select: explicit profile, then the allowId, then the program name, then shell', () => {
    expect(set.select({ profile: 'codex', allowId: 'gemini' }).id).toBe('codex');
    expect(set.select({ allowId: 'gemini' }).id).toBe('gemini');
    expect(set.select({ allowId: 'my-agent', binary: '/opt/bin/claude' }).id).toBe('claude-code');
    expect(set.select({ allowId: 'whatever', binary: '/usr/bin/vim' }).id).toBe('shell');
  });

  it('a new profile is a new file: no engine change, same loader', () => {
    const extra = loadProfiles([{ name: 'mycli.json', data: { id: 'mycli', commands: ['mycli'], working: [{ id: 'busy', pattern: 'crunching' }] } }]);
    expect(extra.select({ binary: 'mycli' }).working[0]?.re.test('crunching numbers')).toBe(true);
  });
});

describe('profile validation', () => {
  it('rejects duplicate ids across files', () => {
    const issues = issuesOf(() => loadProfiles([{ name: 'a.json', data: { id: 'dup' } }, { name: 'b.json', data: { id: 'dup' } }]));
    expect(issues).toEqual([{ path: 'b.json: id', message: 'duplicate profile id "dup" (also in a.json)' }]);
  });

  it('rejects unknown keys, with their path', () => {
    const issues = issuesOf(() => loadProfiles([{ name: 'x.json', data: { id: 'x', wroking: [] } }]));
    expect(issues[0]?.path).toMatch(/^x\.json: /);
    expect(issues[0]?.message).toMatch(/wroking|key/i);
  });

  it('rejects patterns prone to catastrophic backtracking, wherever they are', () => {
    const issues = issuesOf(() =>
      loadProfiles([
        {
          name: 'evil.json',
          data: {
            id: 'evil',
            working: [{ id: 'nested', pattern: '(a+)+$' }],
            queued: [{ id: 'alt', pattern: '^(a|a)*$' }],
            dialogs: [{ id: 'd', pattern: '(\\w+\\s?)*!', kind: 'confirm' }],
            risk: { destructive: ['(x|xy)*z'] },
          },
        },
      ]),
    );
    expect([...new Set(issues.map((i) => i.path))].sort()).toEqual(['evil.json: dialogs.0.pattern', 'evil.json: queued.0.pattern', 'evil.json: risk.destructive.0', 'evil.json: working.0.pattern']);
    expect(issues.every((i) => i.message.startsWith('unsafe pattern'))).toBe(true);
  });

  it('rejects answers that are not key names, and "safe" on a dialog that must escalate or has no answer', () => {
    const issues = issuesOf(() =>
      loadProfiles([
        {
          name: 'p.json',
          data: {
            id: 'p',
            dialogs: [
              { id: 'a', pattern: 'x', kind: 'menu', answer: ['enter'] },
              { id: 'b', pattern: 'y', kind: 'destructive', answer: ['y'], safe: true },
              { id: 'c', pattern: 'z', kind: 'menu', safe: true },
            ],
          },
        },
      ]),
    );
    expect(issues.map((i) => i.path)).toEqual(['p.json: dialogs.0.answer.0', 'p.json: dialogs.1.safe', 'p.json: dialogs.2.safe']);
    expect(issues[0]?.message).toMatch(/did you mean Enter/);
  });

  it('the generic profile (no profile given) is the engine rules alone', () => {
    expect(GENERIC_PROFILE).toMatchObject({ id: 'generic', working: [], dialogs: [], composer: undefined });
  });
});

describe('checkRegexSafety', () => {
  const unsafe = [
    '(a+)+',
    '(a*)*',
    '(a+)*b',
    '(\\w+\\s?)*$',
    '(a?){20}',
    '((ab)*)+',
    '(a|a)*',
    '(a|ab)+',
    '(\\w|\\d)*',
    '(?:x|)*',
    '(.*a){3,}',
    '\\d+\\d+\\d+',
    '.*\\s*.*\\s*x',
    '(a)\\1',
    '(?<n>a)\\k<n>',
    'x'.repeat(600),
    '(unclosed',
    '\\s+$',
    '.*esc to interrupt',
    '(?:x|\\s*)y',
  ];
  const safe = [
    'esc to interrupt',
    '\\besc to interrupt\\b',
    '^\\s*[·✢✳✶✻✽*]\\s\\S[^…]{0,40}…',
    'Do you (?:want|wish) to proceed\\?',
    '^(?:[\\w@.:~/()\\[\\]+-]{0,60}[$#]|>>>|\\.\\.\\.) ',
    '^(?:ab|cd)+',
    '(?:\\d{2}:){2}\\d{2}',
    '^.*foo.*',
    'foo.*',
    '^[a-z]+\\s\\d+',
    '^\\W{0,4}Waiting for \\S',
  ];
  it.each(unsafe)('rejects %s', (src) => expect(checkRegexSafety(src).length).toBeGreaterThan(0));
  it.each(safe)('accepts %s', (src) => expect(checkRegexSafety(src, 'u')).toEqual([]));

  it('the runtime guard bounds the input a pattern sees', () => {
    const long = `${'a'.repeat(MAX_MATCH_CHARS * 4)}MARK`;
    expect(boundedTest(/MARK$/, long)).toBe(true);
    expect(boundedTest(/^a{16384}/, long)).toBe(false);
  });
});
